package seatbelt

import (
	"errors"
	"fmt"
	"path/filepath"
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
	r.b.WriteString("(version 1)\n")
	r.b.WriteString("(allow default)\n")
	r.processes()
	r.network(opt)
	r.filesystem(m)
	r.devices(opt.Devices)
	r.moves(m)
	r.noWayOut()
	if n := paramBytes(r.params); n > MaxParamBytes {
		return nil, fmt.Errorf("seatbelt: %d roots need %d bytes of parameters, more than the %d this backend passes to sandbox-exec: %w",
			len(m.roots), n, MaxParamBytes, ErrTooLarge)
	}
	return &Profile{SBPL: r.b.String(), Params: r.params}, nil
}

// processes: run and fork freely; signal, inspect and debug only the
// sandbox's own; no typing into the terminal.
func (r *renderer) processes() {
	w := &r.b
	w.WriteString("\n;; processes: run and fork freely; signal, inspect and debug only the sandbox's own\n")
	w.WriteString("(allow process-exec process-fork)\n")
	for _, op := range []string{"signal", "process-info*", "mach-priv-task-port"} {
		fmt.Fprintf(w, "(deny %s)\n(allow %s (target same-sandbox))\n", op, op)
	}
	w.WriteString(";; no typing into the terminal the sandbox was started from\n")
	fmt.Fprintf(w, ";; TIOCSTI = _IOW('t', 114, char) = %#x, by number: the symbol is unbound on macOS 13 and 14\n", TIOCSTI)
	fmt.Fprintf(w, "(deny file-ioctl (ioctl-command %d))\n", TIOCSTI)
}

// network: the host's, none, or only the proxy's port on loopback.
func (r *renderer) network(opt Options) {
	w := &r.b
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
}

// filesystem: a rule per root, shallow to deep, then the traversal of
// the unreadable ancestors of readable roots.
func (r *renderer) filesystem(m *model) {
	w := &r.b
	w.WriteString("\n;; filesystem: roots shallow to deep; the last matching rule, the deepest root, wins\n")
	if m.restrict {
		w.WriteString(";; restrictWrites: no writes outside writable roots\n")
		w.WriteString("(deny file-write* file-link)\n")
	}
	for _, root := range m.roots {
		sub := r.spellings("subpath", root.Path)
		fmt.Fprintf(w, ";; %s %s\n", r.names[root.Path], root.Kind.Field())
		switch root.Kind {
		case policy.Denied:
			fmt.Fprintf(w, "(deny file-read* file-write* file-link file-clone process-exec %s)\n", sub)
		case policy.Readonly:
			fmt.Fprintf(w, "(allow file-read* process-exec %s)\n", sub)
			fmt.Fprintf(w, "(deny file-write* file-link %s)\n", sub)
		default: // Writable, BaseWritable
			fmt.Fprintf(w, "(allow file-read* file-write* file-link process-exec %s)\n", sub)
		}
	}
	if trav := m.traversal(); len(trav) > 0 {
		w.WriteString("\n;; traversal: metadata of the unreadable ancestors of readable roots, nothing more\n")
		r.rules("(allow file-read-metadata", ")", r.literals("A", trav))
	}
}

// devices: the fixed ones and the caller's extra, in every mode.
func (r *renderer) devices(extra []string) {
	w := &r.b
	w.WriteString("\n;; devices, in every mode\n")
	w.WriteString("(allow file-read* file-write*\n")
	for _, d := range devices {
		fmt.Fprintf(w, "  (literal %q)\n", d)
	}
	w.WriteString("  (regex #\"^/dev/ttys[0-9]+$\")\n")
	w.WriteString("  (subpath \"/dev/fd\"))\n")
	if len(extra) > 0 {
		var fs []filter
		for _, d := range extra {
			r.param("D", d)
			fs = append(fs, filter{fmt.Sprintf("(literal %s)", r.ref(d)), len(d)})
		}
		r.rules("(allow file-read* file-write*", ")", fs)
	}
}

// moves: the writable ancestors of denied and read-only roots stay where
// they are.
func (r *renderer) moves(m *model) {
	prot := m.protected()
	if len(prot) == 0 {
		return
	}
	w := &r.b
	w.WriteString("\n;; moves: writable ancestors of denied and readonly roots stay where they are,\n")
	w.WriteString(";; and nothing but a directory may be created (or renamed) in their place\n")
	lits := r.literals("A", prot)
	r.rules("(deny file-write-unlink", ")", lits)
	r.rules("(deny file-write-create (require-all (require-not (vnode-type DIRECTORY)) (require-any", ")))", lits)
}

// noWayOut comes last, so no root's allow can re-open them: the system's
// own ways of starting a process outside this sandbox. (allow default)
// leaves them open, and a program started by launchd, LaunchServices or
// through an Apple Event answers to no profile at all.
func (r *renderer) noWayOut() {
	w := &r.b
	w.WriteString("\n;; no way out through launchd, LaunchServices, Apple Events or mounts\n")
	w.WriteString("(deny job-creation)\n")
	w.WriteString("(deny lsopen)\n")
	w.WriteString("(deny appleevent-send)\n")
	w.WriteString("(deny file-mount file-unmount)\n")
	// cfprefsd writes a preference domain's plist on the caller's behalf,
	// outside every path rule (login items, Terminal startup commands).
	w.WriteString("(deny user-preference-write)\n")
	// A set-user-ID or set-group-ID file made inside would run with its
	// owner's rights for any user who reaches it later (docs/threat-model.md,
	// class 11). Last, so that no path rule allows it again.
	w.WriteString("(deny file-write-setugid)\n")
	w.WriteString("(deny process-exec\n")
	for _, p := range launchers {
		fmt.Fprintf(w, "  (literal %q)\n", p)
	}
	w.WriteString(")\n")
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
