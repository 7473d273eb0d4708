package seatbelt

import (
	"fmt"
	"strings"
)

// renderer accumulates the text and one parameter per distinct path.
type renderer struct {
	b      strings.Builder
	params []Param
	names  map[string]string // path -> parameter name
	counts map[string]int    // prefix -> parameters named with it so far
}

// param names path, reusing its name if it has one.
func (r *renderer) param(prefix, path string) string {
	if n, ok := r.names[path]; ok {
		return n
	}
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	n := fmt.Sprintf("%s%d", prefix, r.counts[prefix])
	r.counts[prefix]++
	r.names[path] = n
	r.params = append(r.params, Param{Name: n, Value: path})
	return n
}

// ref is the SBPL expression for a path that already has a parameter.
func (r *renderer) ref(path string) string {
	return fmt.Sprintf("(param %q)", r.names[path])
}

// filter is one path filter of a rule and the bytes of path it matches,
// what counts towards the rule's pattern size.
type filter struct {
	text  string
	bytes int
}

// dataSpelling is p's spelling on the data volume, or false for paths that
// have none: "/", the data volume itself and what lies under /System/Volumes,
// and device nodes. A path of the sealed system volume (/usr/bin) gets one
// too; it names nothing, and listing every firmlink would go stale with the
// next release.
func dataSpelling(p string) (string, bool) {
	switch {
	case p == "/", p == "/dev", strings.HasPrefix(p, "/dev/"),
		p == "/System/Volumes", strings.HasPrefix(p, "/System/Volumes/"):
		return "", false
	}
	return DataVolume + p, true
}

// pathFilters returns the filters of kind (subpath, literal) that match
// path under every spelling the kernel may hand Seatbelt: the path, and
// its data-volume spelling as (string-append DataVolume (param …)), which
// costs no parameter. Both count towards the rule's pattern size.
func (r *renderer) pathFilters(kind, path string) []filter {
	ref := r.ref(path)
	out := []filter{{fmt.Sprintf("(%s %s)", kind, ref), len(path)}}
	if d, ok := dataSpelling(path); ok {
		out = append(out, filter{fmt.Sprintf("(%s (string-append %q %s))", kind, DataVolume, ref), len(d)})
	}
	return out
}

// spellings is pathFilters joined for a one-path rule.
func (r *renderer) spellings(kind, path string) string {
	fs := r.pathFilters(kind, path)
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.text
	}
	return strings.Join(parts, " ")
}

// literals names each of paths with a parameter and returns the filters
// that match them exactly.
func (r *renderer) literals(prefix string, paths []string) []filter {
	var out []filter
	for _, p := range paths {
		r.param(prefix, p)
		out = append(out, r.pathFilters("literal", p)...)
	}
	return out
}

// rules writes head, filters, tail as one rule, or as several when the
// filters' paths together pass ruleBudget: consecutive runs, in order, each
// as large as fits (a lone path over the budget gets a rule of its own).
// Every rule of one call has the same action and operations, so which rule
// matches a path does not change the decision.
func (r *renderer) rules(head, tail string, fs []filter) {
	for len(fs) > 0 {
		n, size := 0, 0
		for n < len(fs) && (n == 0 || size+fs[n].bytes <= ruleBudget) {
			size += fs[n].bytes
			n++
		}
		r.b.WriteString(head + "\n")
		for i, f := range fs[:n] {
			end := ""
			if i == n-1 {
				end = tail
			}
			fmt.Fprintf(&r.b, "  %s%s\n", f.text, end)
		}
		fs = fs[n:]
	}
}
