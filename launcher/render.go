package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/native"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
)

// Rendered is what a launch would execute, for 'cordon profile'.
type Rendered struct {
	Policy  policy.FsSandboxPolicy `json:"policy"`
	Backend string                 `json:"backend"`
	// Argv is the program and arguments a launch executes: bwrap's, with
	// the command at the end; sandbox-exec's; or, for native, cordon
	// itself as its init (the launch starts it as /proc/self/exe, named
	// cordon-init) with the descriptor of its spec, which holds the
	// command (Command).
	Argv []string `json:"argv"`
	// Command is the command the native init runs, from its spec.
	Command []string          `json:"command,omitempty"`
	SBPL    string            `json:"sbpl,omitempty"`
	Params  map[string]string `json:"params,omitempty"`
	// Made are the writable roots that do not exist yet: a launch makes
	// them on the host first (native, bwrap), and they stay. Protected
	// names that do not exist get nothing: the entry gate keeps them.
	Made []string `json:"made,omitempty"`
	// Seccomp describes the filter passed with --seccomp FD (bwrap), or
	// installed by the init (native).
	Seccomp string `json:"seccomp,omitempty"`
	// Mounts are the native backend's mounts in the order its init makes
	// them, after "/", /proc and /dev: "bind P", "ro-bind P", "pin P",
	// "mask P SRC".
	Mounts []string `json:"mounts,omitempty"`
	// Network is the network allowlist and how it is enforced, when
	// there is one.
	Network *RenderedNet `json:"network,omitempty"`
	// Landlock says which Landlock ABI confines a native sandbox, or that
	// it has one wall, and what its rules grant (native).
	Landlock      string   `json:"landlock,omitempty"`
	LandlockRules []string `json:"landlockRules,omitempty"`
	// LandlockPlan is the landlock backend's domain: its rules, and where
	// it is stricter than the policy (landlock).
	LandlockPlan *landlock.Plan `json:"landlockPlan,omitempty"`
	// Nested says this process runs inside a cordon sandbox already: a
	// launch runs Argv (the command) directly under the outer sandbox,
	// which confines it, and Backend names the outer sandbox's.
	Nested bool `json:"nested,omitempty"`
	// UnixSockets are the host sockets handed over (Cmd.UnixSockets),
	// which the caller sets: the policy alone does not name them.
	UnixSockets []policy.HostSocket `json:"unixSockets,omitempty"`
}

// RenderedNet is a launch's network allowlist for 'cordon profile'.
type RenderedNet struct {
	AllowDomains []string `json:"allowDomains"`
	DenyDomains  []string `json:"denyDomains"` // [] when none
	// Proxy is the proxy's URL inside the sandbox (HTTP_PROXY).
	Proxy string `json:"proxy"`
	// Enforcement says how the sandbox is kept to the proxy.
	Enforcement string `json:"enforcement"`
}

// Render shows what Start would execute for policy p and command cmd,
// without creating anything. backend "auto" means this OS's backend.
// network is the host's network (Cmd.Network), np a network allowlist
// (Cmd.NetPolicy) or nil.
func Render(ctx context.Context, p policy.FsSandboxPolicy, backend string, network bool, np *netpolicy.Policy, cmd []string) (*Rendered, error) {
	if np != nil && network {
		return nil, fmt.Errorf("network: a domain allowlist and the host's full network cannot be combined")
	}
	if res := detect.Detect(ctx, backend); res.Nested {
		// As Start does: the outer sandbox confines the command, and its
		// own state directory (cordon's, masked) is not this launch's.
		canon, err := policy.Canonicalize(p)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		return &Rendered{Policy: canon.Policy(), Backend: res.Backend, Argv: cmd, Nested: true}, nil
	}
	canon, err := canonicalize(p, nil)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if backend == "" || backend == BackendAuto {
		backend = BackendBwrap
		switch {
		case runtime.GOOS == "darwin":
			backend = BackendSeatbelt
		case detect.Detect(ctx, BackendAuto).Backend == BackendNative:
			backend = BackendNative // as Start chooses
		}
	}
	out := &Rendered{Policy: canon.Policy(), Backend: backend}
	switch backend {
	case BackendBwrap:
		return renderBwrap(ctx, out, canon, network, np, cmd)
	case BackendNative:
		return renderNative(out, canon, network, np, cmd)
	case BackendSeatbelt:
		return renderSeatbelt(out, canon, network, np, cmd)
	case BackendLandlock:
		return renderLandlock(out, canon, network, np, cmd)
	default:
		return nil, fmt.Errorf("backend %q: want auto, bwrap, native, landlock or seatbelt", backend)
	}
}

// renderBwrap fills out with bwrap's argv, the roots it makes and, with
// an allowlist, the proxy's helper before cmd.
func renderBwrap(ctx context.Context, out *Rendered, canon *policy.Canonical, network bool, np *netpolicy.Policy, cmd []string) (*Rendered, error) {
	res := detect.Detect(ctx, BackendBwrap)
	path := res.Path
	if path == "" {
		path = "bwrap"
	}
	opts := bwrap.Options{
		Network:       network,
		EmptyFile:     emptyFilePath(),
		MaskRoot:      maskRootPath(),
		DisableUserns: versionAtLeast(res.Version, 0, 8),
		Stat:          canon.Stat,
	}
	if np != nil {
		s := bwrap.SocketsProxy()
		opts.Sockets = &s
		exe, err := selfHelper(canon)
		if err != nil {
			exe = "CORDON (" + err.Error() + ")"
		}
		cmd = append([]string{exe, netExecArg, "FD", strconv.Itoa(ProxyPort)}, cmd...)
		out.Network = &RenderedNet{AllowDomains: np.AllowText(), DenyDomains: append([]string{}, np.DenyText()...),
			Proxy:       "http://127.0.0.1:" + strconv.Itoa(ProxyPort),
			Enforcement: bwrapNetEnforcement}
	}
	plan, err := bwrap.Render(canon, opts)
	if err != nil {
		return nil, err
	}
	// A launch passes the seccomp program through a descriptor too.
	out.Argv = append(append([]string{path}, plan.Args...), "--seccomp", "FD", "--")
	out.Seccomp = bwrap.Describe(plan.Rules)
	out.Argv = append(out.Argv, cmd...)
	out.Made = madeRoots(canon)
	return out, nil
}

// renderNative fills out with the native init's mounts, in the order it
// makes them, and the roots it makes on the host.
func renderNative(out *Rendered, canon *policy.Canonical, network bool, np *netpolicy.Policy, cmd []string) (*Rendered, error) {
	opts := bwrap.Options{
		Network:    network,
		EmptyFile:  emptyFilePath(),
		MaskRoot:   maskRootPath(),
		Stat:       canon.Stat,
		MountsOnly: true,
	}
	if np != nil {
		s := bwrap.SocketsProxy()
		opts.Sockets = &s
		out.Network = &RenderedNet{AllowDomains: np.AllowText(), DenyDomains: append([]string{}, np.DenyText()...),
			Proxy:       "http://127.0.0.1:" + strconv.Itoa(ProxyPort),
			Enforcement: nativeNetEnforcement}
	}
	plan, err := bwrap.Render(canon, opts)
	if err != nil {
		return nil, err
	}
	// As native.Command starts it for 'cordon run' (no ExtraFiles of the
	// caller): the spec's descriptor follows the socket of the proxy.
	exe, err := selfExe()
	if err != nil {
		exe = "CORDON (" + err.Error() + ")"
	}
	fd := 3
	if np != nil {
		fd++
	}
	out.Argv = []string{exe, native.InitArg, strconv.Itoa(fd)}
	out.Command = cmd
	out.Seccomp = bwrap.Describe(plan.Rules)
	out.Made = madeRoots(canon)
	abi := native.LandlockABI()
	out.Landlock = native.LandlockStatus(abi)
	spec := native.Spec{RootWritable: canon.Access("/", policy.Write)}
	for _, m := range plan.Mounts {
		if m.Kind == bwrap.MountBind {
			spec.Mounts = append(spec.Mounts, native.Mount{Path: m.Path, What: "bind"})
		}
	}
	if p, ok := native.PlanLandlock(&spec, abi, nil); ok {
		out.LandlockRules = p.Describe()
	}
	for _, m := range plan.Mounts {
		switch m.Kind {
		case bwrap.MountPin:
			out.Mounts = append(out.Mounts, "pin "+m.Path)
		case bwrap.MountBind:
			out.Mounts = append(out.Mounts, "bind "+m.Path)
		case bwrap.MountReadonly:
			out.Mounts = append(out.Mounts, "ro-bind "+m.Path)
		default:
			out.Mounts = append(out.Mounts, "mask "+m.Path+" "+m.Src)
		}
	}
	return out, nil
}

// madeRoots are the writable roots of canon that do not exist, which a
// launch makes (makeAbsentRoots).
func madeRoots(canon *policy.Canonical) []string {
	var out []string
	for _, r := range canon.Roots() {
		if r.Path == "/" || r.Kind != policy.Writable && r.Kind != policy.BaseWritable {
			continue
		}
		if exists, _ := canon.Stat(r.Path); !exists {
			out = append(out, r.Path)
		}
	}
	return out
}

// versionAtLeast compares a "bubblewrap 0.8.0"-style version string.
func versionAtLeast(v string, major, minor int) bool {
	f := strings.Fields(v)
	if len(f) == 0 {
		return false
	}
	parts := strings.Split(f[len(f)-1], ".")
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// nativeNetEnforcement is how the native backend keeps a sandbox to its
// proxy.
const nativeNetEnforcement = "the sandbox has its own network namespace, with only loopback, and the seccomp filter refuses Unix sockets; " +
	"its one way out is cordon's proxy, whose listener on 127.0.0.1:3128 the sandbox's init makes inside that namespace before it confines itself " +
	"and hands to cordon outside: cordon accepts there, decides each request by the host name asked for, and connects out from the host"

// bwrapNetEnforcement is how bwrap keeps a sandbox to its proxy.
const bwrapNetEnforcement = "the sandbox has its own network namespace, with only loopback (--unshare-net), and the seccomp filter refuses Unix sockets; " +
	"its one way out is cordon's proxy, whose listener on 127.0.0.1:3128 is made inside that namespace (cordon __cordon-net-exec, before the command) " +
	"and handed to cordon outside over a socket pair: cordon accepts there, decides each request by the host name asked for, and connects out from the host"

// selfExe is the running executable by its real path: what /proc/self/exe
// names when the launch starts the native init.
func selfExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}
