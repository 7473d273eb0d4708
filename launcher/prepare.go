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

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

// prepare resolves the backend and the policy and builds the process that
// runs the sandbox. release undoes what the launch created on the host.
func (c *Cmd) prepare(ctx context.Context) (inner *exec.Cmd, release func(), err error) {
	backend := c.Backend
	if backend == "" {
		backend = BackendAuto
	}
	switch backend {
	case BackendAuto, BackendBwrap, BackendSeatbelt, BackendNone:
	default:
		return nil, nil, fmt.Errorf("backend %q: want auto, bwrap, seatbelt or none", backend)
	}
	var res detect.Result
	if backend != BackendNone {
		res = detect.Detect(ctx, backend)
	}
	// With bwrap, canonicalization looks at the host under the stub
	// registry's lock, and the stubs are decided before it is let go: the
	// reaper removes stubs only under that lock, so none vanishes between
	// what canonicalization saw and what bwrap mounts.
	var reg *registry
	if res.Usable && !res.Nested && res.Backend == BackendBwrap {
		if reg, err = openRegistry(); err != nil {
			return nil, nil, err
		}
		defer reg.unlock()
	}
	canon, err := canonicalize(c.Policy)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: %w", err)
	}
	if err := c.checkCommand(canon); err != nil {
		return nil, nil, err
	}
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	if c.TmpDir != "" {
		env = setEnv(env, "TMPDIR", c.TmpDir)
	}
	if backend == BackendNone {
		c.Detected = detect.Result{Backend: BackendNone, Usable: true, Reason: "no sandbox: --backend none was asked for"}
		c.handoff = execSupported
		return c.plain(ctx, env), func() {}, c.makeTmpDir()
	}
	c.Detected = res
	if res.Nested {
		c.handoff = execSupported
		return c.plain(ctx, env), func() {}, c.makeTmpDir()
	}
	if !res.Usable {
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrNoBackend, res.Backend, res.Reason)
	}
	env = setEnv(env, "CORDON_SANDBOX", res.Backend)
	if err := c.makeTmpDir(); err != nil {
		return nil, nil, err
	}
	switch res.Backend {
	case BackendBwrap:
		return c.bwrapCmd(ctx, canon, res, env, reg)
	case BackendSeatbelt:
		return c.seatbeltCmd(ctx, canon, res, env)
	}
	return nil, nil, fmt.Errorf("%w: %s", ErrNoBackend, res.Backend)
}

// canonicalize is policy.Canonicalize plus two rules of cordon's own: its
// stub registry is denied inside a sandbox, and its runtime directory
// (stub registry, masks, the empty file) is never writable there. A sandbox that could write there could make
// the next launch delete files, or unmask denied ones. Adding a read-only
// root only where the model would allow writes never widens the policy;
// the private TMPDIRs below it stay writable, being deeper roots.
func canonicalize(p policy.FsSandboxPolicy) (*policy.Canonical, error) {
	rt, rtErr := policy.Resolve(runtimeDirPath())
	if rtErr == nil {
		// The stub registry is denied: a sandbox that could open its lock
		// file, even read-only, could hold the lock and stall every launch
		// of this user for as long as it runs (FINDINGS F7).
		p.DeniedRoots = append(append([]string(nil), p.DeniedRoots...), filepath.Join(rt, "stubs"))
	}
	c, err := policy.Canonicalize(p)
	if err != nil {
		return nil, err
	}
	if rtErr != nil || !c.Access(rt, policy.Write) {
		return c, nil
	}
	if r, ok := c.Decider(rt); ok && r.Path == rt {
		return nil, fmt.Errorf("%s %s: cordon's runtime directory cannot be a writable root", r.Kind.Field(), rt)
	}
	p.ReadonlyRoots = append(append([]string(nil), p.ReadonlyRoots...), rt)
	return policy.Canonicalize(p)
}

// makeTmpDir creates the private TMPDIR, only once the launch is certain.
func (c *Cmd) makeTmpDir() error {
	if c.TmpDir == "" {
		return nil
	}
	if err := ensurePrivateDir(c.TmpDir); err != nil {
		return fmt.Errorf("TMPDIR: %w", err)
	}
	return nil
}

// checkCommand refuses a command the sandbox could not read: the kernel
// would refuse it too, but with a less helpful message and exit status.
func (c *Cmd) checkCommand(canon *policy.Canonical) error {
	p := c.Path
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
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
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
