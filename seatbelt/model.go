package seatbelt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// firmlinks are the top-level symbolic links into /private that the macOS
// kernel resolves before Seatbelt sees a path.
var firmlinks = []string{"/tmp", "/var", "/etc"}

// darwinPath is the form of a canonical path that Seatbelt matches. A
// data-volume spelling is folded into the short one, which the rules
// match together with its data-volume spelling (pathFilters).
func darwinPath(p string) string {
	if rest, ok := strings.CutPrefix(p, DataVolume); ok && strings.HasPrefix(rest, "/") {
		p = rest
	}
	for _, f := range firmlinks {
		if p == f || strings.HasPrefix(p, f+"/") {
			return "/private" + p
		}
	}
	return p
}

// model is the canonical policy respelled with darwinPath, what the kernel
// matches. The renderer needs the model's decision for ancestors of these
// respelled roots, which policy.Canonical cannot give for paths it never
// saw; it applies policy's rule (the deepest root decides, see
// allowsWrite) and the differential test holds it to policy's answers.
type model struct {
	restrict bool
	roots    []policy.Root // shallow to deep
	kinds    map[string]policy.Kind
}

func newModel(c *policy.Canonical) (*model, error) {
	m := &model{restrict: c.RestrictWrites(), kinds: map[string]policy.Kind{}}
	from := map[string]string{}
	for _, r := range c.Roots() {
		p := darwinPath(r.Path)
		if k, ok := m.kinds[p]; ok {
			if k == r.Kind {
				continue
			}
			return nil, fmt.Errorf("seatbelt: %s %q and %s %q are both %s on macOS: a path may be in only one field",
				k.Field(), from[p], r.Kind.Field(), r.Path, p)
		}
		m.kinds[p] = r.Kind
		from[p] = r.Path
		m.roots = append(m.roots, policy.Root{Path: p, Kind: r.Kind})
	}
	sort.SliceStable(m.roots, func(i, j int) bool {
		a, b := m.roots[i].Path, m.roots[j].Path
		if ra, rb := aboveData(a), aboveData(b); ra != rb {
			return ra
		}
		if da, db := policy.Depth(a), policy.Depth(b); da != db {
			return da < db
		}
		return a < b
	})
	return m, nil
}

// aboveData reports the paths that contain the data-volume spelling of
// every other path: "/", /System, /System/Volumes and the data volume. Their
// rules come first, shallow to deep, so that under the data spelling too
// the deepest root that contains a path is the last rule to match it.
func aboveData(p string) bool {
	return p == "/" || p == "/System" || p == "/System/Volumes" || p == DataVolume
}

// ancestors calls f for each proper ancestor a of p (policy.Ancestors),
// shallow to deep, with whether the model lets the process write a and
// whether a is denied, under either spelling of a: the short one is decided
// by the roots above it, the data-volume one first by the roots of
// aboveData, which contain it too, then by the same roots. One walk down
// the chain instead of a lookup per ancestor keeps 2,000 deep roots cheap.
func (m *model) ancestors(p string, f func(a string, writable, denied bool)) {
	k, ok := m.kinds["/"]
	dk, dok := k, ok
	for _, top := range []string{"/System", "/System/Volumes", DataVolume} {
		if tk, found := m.kinds[top]; found {
			dk, dok = tk, true
		}
	}
	for _, a := range policy.Ancestors(p) {
		if ak, found := m.kinds[a]; found {
			k, ok = ak, true
			dk, dok = ak, true
		}
		_, alias := dataSpelling(a)
		w := allowsWrite(k, ok, m.restrict) || alias && allowsWrite(dk, dok, m.restrict)
		d := k == policy.Denied || alias && dk == policy.Denied
		f(a, w, d)
	}
}

// allowsWrite is the model's write rule (policy.Canonical.Access) for a
// path decided by a root of kind k, or by no root when !ok.
func allowsWrite(k policy.Kind, ok, restrict bool) bool {
	if !ok {
		return !restrict
	}
	return k == policy.Writable || k == policy.BaseWritable
}

// traversal lists, sorted, the unreadable proper ancestors of readable
// roots.
func (m *model) traversal() []string {
	set := map[string]bool{}
	for _, r := range m.roots {
		if r.Kind == policy.Denied {
			continue
		}
		m.ancestors(r.Path, func(a string, _, denied bool) {
			if denied {
				set[a] = true
			}
		})
	}
	return sorted(set)
}

// protected lists, sorted, the writable proper ancestors of denied and
// readonly roots.
func (m *model) protected() []string {
	set := map[string]bool{}
	for _, r := range m.roots {
		if r.Kind != policy.Denied && r.Kind != policy.Readonly {
			continue
		}
		m.ancestors(r.Path, func(a string, writable, _ bool) {
			if writable {
				set[a] = true
			}
		})
	}
	return sorted(set)
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
