package seatbelt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// SandboxExec is the only sandbox-exec cordon runs; PATH is never consulted.
const SandboxExec = "/usr/bin/sandbox-exec"

// MaxParamBytes bounds the argv space the -D parameters may take: half of
// macOS's 1 MiB ARG_MAX, leaving the rest to the environment and the
// command. Each parameter is counted as its two strings with their NUL
// terminators plus two argv pointers.
const MaxParamBytes = 512 << 10

// MaxRulePatternBytes bounds the path data of one rule: the bytes of every
// path its filters match, the data-volume spellings included. Seatbelt
// refuses a rule whose compiled pattern passes 65,535 bytes; the compiled
// form adds per-path overhead to the strings, so the budget keeps a 4x
// margin. Rules that list many paths are split to stay under it.
const MaxRulePatternBytes = 16 << 10

// ruleBudget is MaxRulePatternBytes, a variable only so that a test can
// undo the split and watch the evaluator refuse the profile.
var ruleBudget = MaxRulePatternBytes

// TIOCSTI is the ioctl that pushes a byte into a terminal's input queue,
// written as _IOW('t', 114, char): IOC_IN (0x80000000) | sizeof(char) << 16
// | 't' << 8 | 114 = 0x80017472. The profile names it by number because the
// symbol TIOCSTI is bound in SBPL only on recent releases: macOS 13 and 14
// refuse a profile that names it ("unbound variable").
const TIOCSTI = 0x80017472

// DataVolume is where the writable half of an APFS system lives. Through
// the firmlinks of /usr/share/firmlinks (/Users, /private, /Library,
// /Applications, /opt, /usr/local, …) every user file has a second
// spelling under it, such as /System/Volumes/Data/Users/me/.ssh.
const DataVolume = "/System/Volumes/Data"

// ErrTooLarge is wrapped by Render when the parameters would not fit in
// MaxParamBytes.
var ErrTooLarge = errors.New("profile parameters too large for the command line")

// Options tune what the profile grants outside the five policy fields.
type Options struct {
	// Network allows every network operation; false denies them all,
	// unix-domain sockets included.
	Network bool
	// ProxyPort, with Network false, allows outbound TCP to that port of
	// localhost, where cordon's proxy listens (a network allowlist), and
	// nothing else of the network.
	ProxyPort int
	// Devices are extra device nodes (absolute paths, exact match) made
	// readable and writable in every mode, such as the pty the launcher
	// hands to the child.
	Devices []string
}

// Param is one -D parameter of the profile.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Profile is a rendered Seatbelt profile: SBPL text that names paths only
// through parameters, and the parameters in the order they are first used.
type Profile struct {
	SBPL   string
	Params []Param
}

// ParamMap returns the parameters keyed by name, the shape of
// `cordon profile --json`.
func (p *Profile) ParamMap() map[string]string {
	m := make(map[string]string, len(p.Params))
	for _, pr := range p.Params {
		m[pr.Name] = pr.Value
	}
	return m
}

// Argv returns the command line that runs cmd under the profile, which the
// caller has written to profilePath (a file only the caller can write: the
// profile is the sandbox):
//
//	/usr/bin/sandbox-exec -f PROFILE -D NAME=value ... -- cmd...
func (p *Profile) Argv(profilePath string, cmd []string) []string {
	argv := make([]string, 0, 4+2*len(p.Params)+len(cmd))
	argv = append(argv, SandboxExec, "-f", profilePath)
	for _, pr := range p.Params {
		argv = append(argv, "-D", pr.Name+"="+pr.Value)
	}
	argv = append(argv, "--")
	return append(argv, cmd...)
}

// paramBytes is what the parameters take of ARG_MAX: for each, "-D" and
// "NAME=value" with their NUL bytes and one pointer each.
func paramBytes(ps []Param) int {
	n := 0
	for _, p := range ps {
		n += len("-D") + 1 + len(p.Name) + 1 + len(p.Value) + 1 + 2*8
	}
	return n
}

// devices are readable and writable in every mode. They are fixed strings
// of this package, not input, so they are the only paths written as SBPL
// literals.
var devices = []string{
	"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx",
}

// Render turns a canonical policy into a Seatbelt profile. See the package
// documentation for the rules it emits and why.
func Render(c *policy.Canonical, opt Options) (*Profile, error) {
	if opt.ProxyPort < 0 || opt.ProxyPort > 65535 {
		return nil, fmt.Errorf("seatbelt: proxy port %d out of range", opt.ProxyPort)
	}
	if c == nil {
		return nil, errors.New("seatbelt: render: nil policy")
	}
	m, err := newModel(c)
	if err != nil {
		return nil, err
	}
	for _, d := range opt.Devices {
		if err := checkDevice(d); err != nil {
			return nil, err
		}
	}

	r := renderer{names: map[string]string{}}
	// Roots first, so that R<i> is the i-th root shallow to deep.
	for _, root := range m.roots {
		r.param("R", root.Path)
	}

	w := &r.b
	w.WriteString("(version 1)\n")
	w.WriteString("(allow default)\n")

	w.WriteString("\n;; processes: run and fork freely; signal, inspect and debug only the sandbox's own\n")
	w.WriteString("(allow process-exec process-fork)\n")
	for _, op := range []string{"signal", "process-info*", "mach-priv-task-port"} {
		fmt.Fprintf(w, "(deny %s)\n(allow %s (target same-sandbox))\n", op, op)
	}
	w.WriteString(";; no typing into the terminal the sandbox was started from\n")
	fmt.Fprintf(w, ";; TIOCSTI = _IOW('t', 114, char) = %#x, by number: the symbol is unbound on macOS 13 and 14\n", TIOCSTI)
	fmt.Fprintf(w, "(deny file-ioctl (ioctl-command %d))\n", TIOCSTI)

	switch {
	case !opt.Network && opt.ProxyPort > 0:
		w.WriteString("\n;; network: only cordon's proxy on this host's loopback; unix-domain sockets denied\n")
		w.WriteString("(deny network*)\n")
		// A number, not a path: pasted, never a parameter.
		fmt.Fprintf(w, "(allow network-outbound (remote tcp \"localhost:%d\"))\n", opt.ProxyPort)
	case !opt.Network:
		w.WriteString("\n;; network off, unix-domain sockets included\n")
		w.WriteString("(deny network*)\n")
	}

	w.WriteString("\n;; filesystem: roots shallow to deep; the last matching rule, the deepest root, wins\n")
	if m.restrict {
		w.WriteString(";; restrictWrites: no writes outside writable roots\n")
		w.WriteString("(deny file-write*)\n")
	}
	for _, root := range m.roots {
		sub := r.spellings("subpath", root.Path)
		fmt.Fprintf(w, ";; %s %s\n", r.names[root.Path], root.Kind.Field())
		switch root.Kind {
		case policy.Denied:
			fmt.Fprintf(w, "(deny file-read* file-write* process-exec %s)\n", sub)
		case policy.Readonly:
			fmt.Fprintf(w, "(allow file-read* process-exec %s)\n", sub)
			fmt.Fprintf(w, "(deny file-write* %s)\n", sub)
		default: // Writable, BaseWritable
			fmt.Fprintf(w, "(allow file-read* file-write* process-exec %s)\n", sub)
		}
	}

	if trav := m.traversal(); len(trav) > 0 {
		w.WriteString("\n;; traversal: metadata of the unreadable ancestors of readable roots, nothing more\n")
		r.rules("(allow file-read-metadata", ")", r.literals("A", trav))
	}

	w.WriteString("\n;; devices, in every mode\n")
	w.WriteString("(allow file-read* file-write*\n")
	for _, d := range devices {
		fmt.Fprintf(w, "  (literal %q)\n", d)
	}
	w.WriteString("  (regex #\"^/dev/ttys[0-9]+$\")\n")
	w.WriteString("  (subpath \"/dev/fd\"))\n")
	if len(opt.Devices) > 0 {
		var fs []filter
		for _, d := range opt.Devices {
			r.param("D", d)
			fs = append(fs, filter{fmt.Sprintf("(literal %s)", r.ref(d)), len(d)})
		}
		r.rules("(allow file-read* file-write*", ")", fs)
	}

	if prot := m.protected(); len(prot) > 0 {
		w.WriteString("\n;; moves: writable ancestors of denied and readonly roots stay where they are,\n")
		w.WriteString(";; and nothing but a directory may be created (or renamed) in their place\n")
		lits := r.literals("A", prot)
		r.rules("(deny file-write-unlink", ")", lits)
		r.rules("(deny file-write-create (require-all (require-not (vnode-type DIRECTORY)) (require-any", ")))", lits)
	}

	// Last, so no root's allow can re-open them: the system's own ways of
	// starting a process outside this sandbox. (allow default) leaves them
	// open, and a program started by launchd, LaunchServices or through an
	// Apple Event answers to no profile at all.
	w.WriteString("\n;; no way out through launchd, LaunchServices, Apple Events or mounts\n")
	w.WriteString("(deny job-creation)\n")
	w.WriteString("(deny lsopen)\n")
	w.WriteString("(deny appleevent-send)\n")
	w.WriteString("(deny file-mount file-unmount)\n")
	// cfprefsd writes a preference domain's plist on the caller's behalf,
	// outside every path rule (login items, Terminal startup commands).
	w.WriteString("(deny user-preference-write)\n")
	w.WriteString("(deny process-exec\n")
	for _, p := range launchers {
		fmt.Fprintf(w, "  (literal %q)\n", p)
	}
	w.WriteString(")\n")

	if n := paramBytes(r.params); n > MaxParamBytes {
		return nil, fmt.Errorf("seatbelt: %d roots need %d bytes of parameters, more than the %d this backend passes to sandbox-exec: %w",
			len(m.roots), n, MaxParamBytes, ErrTooLarge)
	}
	return &Profile{SBPL: w.String(), Params: r.params}, nil
}

// launchers are the command-line front ends of those services; denying
// them turns a silent escape attempt into a clear "Operation not permitted"
// even where a service would have refused anyway.
var launchers = []string{"/bin/launchctl", "/usr/bin/open", "/usr/bin/osascript"}

func checkDevice(d string) error {
	switch {
	case d == "":
		return errors.New("seatbelt: device: empty path")
	case strings.IndexByte(d, 0) >= 0:
		return fmt.Errorf("seatbelt: device %q: contains a NUL byte", d)
	case !filepath.IsAbs(d) || filepath.Clean(d) != d:
		return fmt.Errorf("seatbelt: device %q: not a clean absolute path", d)
	}
	return nil
}

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
