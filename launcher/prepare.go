package launcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/internal/timing"
	"github.com/cordon-sandbox/cordon/internal/toolcache"
	"github.com/cordon-sandbox/cordon/policy"
)

// prepare resolves the backend and the policy and builds the process that
// runs the sandbox. release undoes what the launch created on the host.
func (c *Cmd) prepare(ctx context.Context) (inner *exec.Cmd, release func(), err error) {
	backend, err := c.checkBackend()
	if err != nil {
		return nil, nil, err
	}
	var res detect.Result
	if backend != BackendNone {
		res = detect.Detect(ctx, backend)
	}
	// A native launch takes the caller's view of the host as it is, as a
	// landlock launch does: its init opens every mount's source (every
	// rule's object) without following a link and refuses one that
	// changed since.
	native := res.Backend == BackendNative || res.Backend == BackendLandlock
	if testhook.Launch != nil {
		testhook.Launch(c, "resolve")
	}
	canon, err := c.canonicalFor(backend == BackendNone || res.Nested, native)
	if err != nil {
		return nil, nil, err
	}
	timing.Mark("run", "canonical policy")
	env := c.environ(canon)
	if backend == BackendNone || res.Nested {
		return c.unsandboxed(ctx, backend, res, env)
	}
	c.Detected = res
	if !res.Usable {
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrNoBackend, res.Backend, res.Reason)
	}
	if c.hosts, err = c.checkSockets(canon, res.Backend); err != nil {
		return nil, nil, err
	}
	env = setEnv(env, "CORDON_SANDBOX", res.Backend)
	c.streamCanon = canon
	if err := c.makeTmpDir(); err != nil {
		return nil, nil, err
	}
	if res.Backend == BackendNative || res.Backend == BackendBwrap {
		// Both mount the private TMPDIR at /tmp too (policy WithTmp).
		if canon, err = keepSelfOverTmp(canon); err != nil {
			return nil, nil, err
		}
		canon = canon.WithTmp(c.TmpDir)
	}
	return c.sandboxCmd(ctx, canon, res, env)
}

// canonicalFor canonicalizes the policy for this launch and checks the
// roots and the command against it. Without a sandbox to launch
// (unsandboxed: --backend none, or nested inside one that already
// confines this process, where cordon's state directory is a read-only
// mask), there is no state directory to keep out.
func (c *Cmd) canonicalFor(unsandboxed, native bool) (*policy.Canonical, error) {
	var canon *policy.Canonical
	var err error
	switch {
	case unsandboxed:
		canon, err = policy.Canonicalize(c.Policy)
	case native && c.Canonical != nil:
		canon, err = canonicalize(c.Policy, c.Canonical)
	default:
		canon, err = canonicalize(c.Policy, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	// One resolution per launch: the roots resolve to the files the
	// caller built the policy for, or the launch is refused.
	if !testhook.SkipIdentityCheck {
		if err := canon.CheckIDs(c.IDs); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
	}
	if err := c.checkCommand(canon); err != nil {
		return nil, err
	}
	return canon, nil
}

// environ is the command's environment before the backend adds to it:
// Env (nil is this process's, its secrets withheld unless InheritEnv),
// with TMPDIR and the tools' cache variables (cacheEnv).
func (c *Cmd) environ(canon *policy.Canonical) []string {
	env := c.Env
	if env == nil {
		env = os.Environ()
		if !c.InheritEnv {
			env, _ = WithholdSecrets(env, c.PassEnv)
		}
	}
	if c.TmpDir != "" {
		env = setEnv(env, "TMPDIR", c.TmpDir)
	}
	return c.cacheEnv(env, canon)
}

// cacheEnv points each tool's cache variable at the private cache
// (CacheDir), keeping a value of the caller's that canon lets the sandbox
// write: that is a cache the user chose, and one it may use.
func (c *Cmd) cacheEnv(env []string, canon *policy.Canonical) []string {
	if c.CacheDir == "" {
		return env
	}
	return toolcache.Env(env, c.CacheDir, func(p string) bool {
		if rp, err := policy.Resolve(p); err == nil {
			p = rp
		}
		return canon.Access(p, policy.Write)
	})
}

// unsandboxed runs the command without a sandbox of its own: with
// --backend none, or nested inside a cordon sandbox, which already
// confines it.
func (c *Cmd) unsandboxed(ctx context.Context, backend string, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	if backend == BackendNone {
		c.Detected = detect.Result{Backend: BackendNone, Usable: true, Reason: "no sandbox: --backend none was asked for"}
	} else {
		c.Detected = res
		if c.NetPolicy != nil && c.Stderr != nil {
			// As a narrower filesystem policy is, the allowlist is not
			// applied twice: the outer sandbox's network holds.
			fmt.Fprintln(c.Stderr, "cordon: note: already inside a cordon sandbox: its network applies, not this allowlist")
		}
	}
	c.handoff = execSupported
	return c.plain(ctx, env), func() {}, c.makeTmpDir()
}

// checkBackend returns the backend asked for ("" is auto) once it and
// the network settings that go with it are known to make sense.
func (c *Cmd) checkBackend() (string, error) {
	backend := c.Backend
	if backend == "" {
		backend = BackendAuto
	}
	if _, err := ParseBackend(backend); err != nil {
		return "", err
	}
	if err := c.checkNet(); err != nil {
		return "", err
	}
	if backend == BackendNone && c.NetPolicy != nil {
		return "", fmt.Errorf("network: a domain allowlist needs a sandbox to enforce it; --backend none has none")
	}
	return backend, nil
}

// sandboxCmd builds the process of the backend detection chose (for auto
// on Linux, the native backend where it is usable, else bwrap, else
// landlock: see detect.Detect).
func (c *Cmd) sandboxCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	switch res.Backend {
	case BackendBwrap:
		return c.bwrapCmd(ctx, canon, res, env)
	case BackendNative:
		return c.nativeCmd(ctx, canon, res, env)
	case BackendLandlock:
		return c.landlockCmd(ctx, canon, res, env)
	case BackendSeatbelt:
		return c.seatbeltCmd(ctx, canon, res, env)
	}
	return nil, nil, fmt.Errorf("%w: %s", ErrNoBackend, res.Backend)
}

// canonicalize is policy.Canonicalize plus one rule of cordon's own: its
// state directory (internal/state: detection verdict, scan cache, masks,
// audit key) is denied inside every sandbox, whatever the policy. A
// sandbox that could write there could turn off the next launch's
// sandbox or unmask denied ones; one that could only read a lock file
// there could hold it and stall every later launch (FINDINGS F7). The private TMPDIRs below it stay writable where the
// policy names them, being deeper roots. Adding a denied root never widens
// the policy.
func canonicalize(p policy.FsSandboxPolicy, view *policy.Canonical) (*policy.Canonical, error) {
	// Created first, so that the deny is a mount over a real directory
	// (an absent one would only be kept from being made).
	dir, err := state.Dir()
	if err != nil {
		return nil, err
	}
	sd, err := policy.Resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("cordon state directory %s: %w", dir, err)
	}
	q := p
	if !testhook.SkipStateDeny {
		q.DeniedRoots = append(append([]string(nil), p.DeniedRoots...), sd)
		// Every other place cordon kept this user's state (state.Places):
		// the home's, when /tmp's is in use, and the other way round.
		for _, old := range state.Places() {
			if ro, err := policy.Resolve(old); err == nil {
				q.DeniedRoots = append(q.DeniedRoots, ro)
			}
		}
	}
	var c *policy.Canonical
	if view != nil {
		c, err = view.Recanonicalize(q)
	} else {
		c, err = policy.Canonicalize(q)
	}
	if err != nil {
		// Only now look for the usual cause, a root naming the state
		// directory in another field: resolving every root again on each
		// launch would cost as much as canonicalizing.
		for _, l := range [][]string{p.BaseWritableRoots, p.ReadonlyRoots, p.WritableRoots} {
			for _, r := range l {
				if rr, rerr := policy.Resolve(r); rerr == nil && rr == sd {
					return nil, fmt.Errorf("root %s: cordon's state directory cannot be a root of a policy; it is always denied inside the sandbox", r)
				}
			}
		}
		return nil, err
	}
	if err := stateRoots(c, sd); err != nil {
		return nil, err
	}
	return c, nil
}

// stateRoots refuses a root inside the state directory sd other than the
// private TMPDIRs below its tmp/ (and what the preset protects in them):
// a deeper root would win over the deny, and hand the sandbox what later
// launches trust (the masks, the scan records, the audit key) to read or write.
func stateRoots(c *policy.Canonical, sd string) error {
	if testhook.SkipStateDeny {
		return nil
	}
	for _, r := range c.Roots() {
		rel, ok := strings.CutPrefix(r.Path, sd+"/")
		if !ok || r.Kind == policy.Denied {
			continue
		}
		if dir, rest, _ := strings.Cut(rel, "/"); (dir == state.Tmp || dir == state.Cache) && rest != "" {
			continue
		}
		return fmt.Errorf("root %s: inside cordon's state directory %s, which is denied inside every sandbox; only the private TMPDIRs in %s/%s and caches in %s/%s are handed in", r.Path, sd, sd, state.Tmp, sd, state.Cache)
	}
	return nil
}

// makeTmpDir creates the private TMPDIR and cache, only once the launch
// is certain, and holds them for the launch (tmpdir.go). One in cordon's
// state directory also starts the day's tidy of the others there.
func (c *Cmd) makeTmpDir() error {
	var err error
	if c.tmpHold, err = makePrivate(c.TmpDir, state.Tmp); err != nil {
		return fmt.Errorf("TMPDIR %s: %w", c.TmpDir, err)
	}
	if c.cacheHold, err = makePrivate(c.CacheDir, state.Cache); err != nil {
		return fmt.Errorf("cache %s: %w", c.CacheDir, err)
	}
	return nil
}

// makePrivate makes dir (none when "") and returns its hold when it lies
// in the state directory's subdirectory sub, tidying sub; a directory
// elsewhere is the caller's own, and so is its lifetime.
func makePrivate(dir, sub string) (*os.File, error) {
	if dir == "" {
		return nil, nil
	}
	parent := filepath.Dir(dir)
	if parent != filepath.Join(state.Path(), sub) {
		return nil, ensurePrivateDir(dir)
	}
	f, err := holdTmpDir(dir)
	if err != nil {
		return nil, err
	}
	tidyTmpDirs(parent, time.Now())
	return f, nil
}

// checkCommand refuses a command the sandbox could not read: the kernel
// would refuse it too, but with a less helpful message and exit status.
func (c *Cmd) checkCommand(canon *policy.Canonical) error {
	p := c.Path
	if p == "" { // filepath.Abs would make it the working directory
		return &exec.Error{Name: c.Path, Err: errors.New("empty command name")}
	}
	if !filepath.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return &exec.Error{Name: c.Path, Err: err}
		}
		p = abs
	}
	rp, err := policy.Resolve(p)
	if err != nil {
		return &exec.Error{Name: c.Path, Err: err}
	}
	fi, err := os.Stat(rp)
	switch {
	case err != nil:
		return &exec.Error{Name: c.Path, Err: err}
	case fi.IsDir():
		return &exec.Error{Name: c.Path, Err: syscall.EISDIR}
	case fi.Mode().Perm()&0o111 == 0:
		return &exec.Error{Name: c.Path, Err: fs.ErrPermission}
	}
	if !canon.Access(rp, policy.Read) {
		return &exec.Error{Name: c.Path, Err: fmt.Errorf("%w (%s)", ErrDenied, canon.Explain(rp).Reason)}
	}
	return nil
}

// plain runs the command unwrapped: for --backend none, and inside an
// outer cordon sandbox that already confines it.
func (c *Cmd) plain(ctx context.Context, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path)
	cmd.Args = c.Args
	c.wire(cmd, env)
	return cmd
}

// wire copies the os/exec-shaped fields onto the process that is started.
func (c *Cmd) wire(cmd *exec.Cmd, env []string) {
	cmd.Env = env
	cmd.Dir = c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.ExtraFiles = append([]*os.File(nil), c.ExtraFiles...)
	if c.Cancel != nil {
		cmd.Cancel = c.Cancel
	}
	cmd.WaitDelay = c.WaitDelay
}

func setEnv(env []string, key, val string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+val)
}

// CleanEnv keeps only the variables a command needs to behave normally
// (PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR, SHELL) from env,
// then adds extra: "KEY=VAL" sets a value, "KEY" copies it from env.
func CleanEnv(env []string, extra []string) []string {
	keep := map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true,
		"LANG": true, "TERM": true, "TMPDIR": true, "SHELL": true}
	var out []string
	lookup := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		lookup[k] = v
		if keep[k] || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	for _, e := range extra {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			var found bool
			if v, found = lookup[k]; !found {
				continue
			}
		}
		out = setEnv(out, k, v)
	}
	return out
}

var errOS = errors.New("not available on this operating system")

// keepSelfOverTmp adds cordon's own executable as a read-only root when it
// lives in the host's /tmp and no root of the policy shows it: the private
// /tmp (policy WithTmp) would hide it, and the helpers cordon starts inside
// (bwrap's entry gate and proxy, the agent shell) run it by its path. Only
// the one file is shown, never its directory.
func keepSelfOverTmp(canon *policy.Canonical) (*policy.Canonical, error) {
	exe, err := selfExe()
	if err != nil || !policy.UnderTmp(exe) {
		return canon, nil
	}
	if r, ok := canon.DecidingRoot(exe); ok && r.Path != policy.TmpPath {
		return canon, nil
	}
	p := canon.Policy()
	p.ReadonlyRoots = append(p.ReadonlyRoots, exe)
	d, err := canon.Recanonicalize(p)
	if err != nil {
		return nil, fmt.Errorf("show cordon's executable %s over the private /tmp: %w", exe, err)
	}
	d.AddNotes(canon.Notes()...) // Policy() carries roots, not the notes
	return d, nil
}
