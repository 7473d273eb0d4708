package launcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"

	"github.com/cordon-sandbox/cordon/internal/memfd"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// bwrapCmd renders the policy for bwrap.
func (c *Cmd) bwrapCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	opts, err := c.renderOptions(canon)
	if err != nil {
		return nil, nil, err
	}
	opts.DisableUserns = versionAtLeast(res.Version, 0, 8)
	// The caller's ExtraFiles keep fds 3..; the sandbox's end of the
	// proxy's socket pair (with a network allowlist), the seccomp program
	// and the argument list come after them, then the roots' descriptors.
	extra := len(c.ExtraFiles)
	if c.NetPolicy != nil {
		extra++
	}
	// The entry gate's socket and program follow (bwrapGate). It keeps
	// the absent protected names from being made: without cordon
	// readable inside there is no helper to install it, and nothing else
	// would, so the launch is refused.
	gateFD := -1
	if gated() {
		if _, err := selfHelper(canon); err != nil {
			return nil, nil, fmt.Errorf("bwrap: the entry gate's helper (cordon %s) must run inside the sandbox: %w; install cordon where the sandbox may read it (not in a denied directory or the private /tmp), or use --backend native or landlock", gateExecArg, err)
		}
		gateFD = 3 + extra
		extra += 2
	}
	seccompFD, argsFD := 3+extra, 4+extra
	roots := &rootFDs{canon: canon, first: 5 + extra}
	// The numbers between the argument list and the roots' descriptors
	// are closed in bwrap (nil ExtraFiles), which would also close some
	// descriptors the close-on-exec pass is there for: the mutation that
	// removes that pass binds by path, so that it removes one step only.
	if res.BindFD && !testhook.SkipIdentityCheck && !testhook.SkipCloseOnExec {
		opts.FD = roots.open
	}
	plan, err := bwrap.Render(canon, opts)
	if err == nil {
		err = roots.err
	}
	if err == nil {
		err = mountBudget(len(plan.Mounts))
	}
	var argv []string
	var netEnd, gateProg *os.File
	var mg *metaGate
	if err == nil {
		argv, netEnd, mg, gateProg, env, err = c.bwrapArgv(canon, plan, env, gateFD)
	}
	if err == nil {
		err = prepareMountPoints(plan, canon)
	}
	closeGate := func() {
		mg.close()
		if gateProg != nil {
			gateProg.Close()
		}
	}
	if err != nil {
		closeGate()
		roots.close()
		c.stopNet()
		return nil, nil, err
	}
	c.handoff = c.net == nil && mg == nil
	// bwrap closes the seccomp program and the argument list once read,
	// and each root's descriptor once bound.
	if mg != nil {
		// The gate's helper makes the socket diagnostics inside before
		// its own filter, which refuses them to the command.
		plan.Seccomp = bwrap.Program(outerRules(plan.Rules, c.hosts.unixGated()))
	}
	filter, args, err := sealPlan(plan, c.Network, seccompFD)
	if err != nil {
		closeGate()
		roots.close()
		c.stopNet()
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, res.Path)
	cmd.Args = append([]string{res.Path, "--args", strconv.Itoa(argsFD), "--"}, argv...)
	c.wire(cmd, env)
	cmd.Dir = "" // bwrap's --chdir decides inside
	privateMountNamespace(cmd)
	if netEnd != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, netEnd)
	}
	if mg != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, mg.theirs, gateProg)
		c.afterStart = func() { mg.serve(c.stderrFor()) }
		c.stopGate = mg.stop
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, filter, args)
	roots.place(cmd)
	return cmd, func() { filter.Close(); args.Close(); closeGate(); roots.close() }, nil
}

// bwrapArgv is the command line bwrap runs inside: the command, behind
// the pty's helper with a terminal and the proxy's helper with a network
// allowlist (which also starts the proxy's session and returns the
// sandbox's end of its socket pair and the environment for it).
func (c *Cmd) bwrapArgv(canon *policy.Canonical, plan *bwrap.Plan, env []string, gateFD int) (argv []string, netEnd *os.File, mg *metaGate, prog *os.File, _ []string, err error) {
	argv = append([]string{c.Path}, c.Args[1:]...)
	if gateFD >= 0 {
		// Innermost: nothing of the sandbox runs before the gate.
		if mg, prog, argv, err = c.bwrapGate(canon, plan, argv, gateFD); err != nil {
			return nil, nil, nil, nil, nil, err
		}
	}
	fail := func(err error) ([]string, *os.File, *metaGate, *os.File, []string, error) {
		mg.close()
		if prog != nil {
			prog.Close()
		}
		return nil, nil, nil, nil, nil, err
	}
	if c.Tty {
		argv = c.ttyArgv(canon, argv)
		c.ttyInBwrap = true
	}
	if c.NetPolicy != nil {
		c.net, netEnd, argv, env, err = c.newNetSession(canon, argv, env, 3+len(c.ExtraFiles), c.stderrFor())
		if err != nil {
			return fail(err)
		}
	}
	if err := checkArgCount(plan.Args, argv); err != nil {
		return fail(err)
	}
	return argv, netEnd, mg, prog, env, nil
}

// sealPlan puts the seccomp program and bwrap's options (with --seccomp
// FD naming it) into sealed memory files.
func sealPlan(plan *bwrap.Plan, network bool, seccompFD int) (filter, args *os.File, err error) {
	if testhook.BwrapArgs != nil {
		plan.Args = testhook.BwrapArgs(plan.Args)
	}
	if testhook.Seccomp != nil {
		plan.Seccomp = testhook.Seccomp(network)
	}
	filter, err = memfd.Sealed("cordon-seccomp", plan.Seccomp)
	if err != nil {
		return nil, nil, err
	}
	if !testhook.SkipSeccomp {
		plan.Args = append(plan.Args, "--seccomp", strconv.Itoa(seccompFD))
	}
	args, err = memfd.Sealed("cordon-bwrap-args", nulJoin(plan.Args))
	if err != nil {
		filter.Close()
		return nil, nil, err
	}
	return filter, args, nil
}

// maxRootFDs bounds the descriptors a launch holds for its roots; roots
// past it are bound by path, checked only before the launch.
const maxRootFDs = 512

// rootFDs opens the roots bwrap binds from descriptors, each checked to be
// the file the policy was resolved to (Canonical.ID): bwrap then mounts
// that file and checks, once it is mounted, that the mount point is it.
// Only descriptors that bwrap.Render put in the arguments are opened, so
// every one is consumed (and closed) by bwrap: an unclaimed descriptor of
// a host directory would reach the sandboxed command, and openat from it
// walks the host's mounts, not the sandbox's.
type rootFDs struct {
	canon *policy.Canonical
	first int
	files []*os.File
	err   error
}

func (r *rootFDs) open(p string) (int, bool) {
	want, existed := r.canon.ID(p)
	if r.err != nil || !existed || len(r.files) >= maxRootFDs {
		return 0, false // a root that did not exist was made since, bound by path
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		r.err = fmt.Errorf("root %s changed while the sandbox was being prepared: %w; refusing the launch", p, err)
		return 0, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		r.err = fmt.Errorf("root %s: fstat: %w", p, err)
		return 0, false
	}
	if got := (policy.FileID{Dev: st.Dev, Ino: st.Ino}); got != want {
		unix.Close(fd)
		r.err = fmt.Errorf("root %s changed while the sandbox was being prepared (was %s, now %s); refusing the launch", p, want, got)
		return 0, false
	}
	// Above every descriptor placed for bwrap before it, in order.
	min := r.first
	if n := len(r.files); n > 0 {
		min = int(r.files[n-1].Fd()) + 1
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, min)
	unix.Close(fd)
	if err != nil {
		r.err = fmt.Errorf("root %s: %w", p, err)
		return 0, false
	}
	r.files = append(r.files, os.NewFile(uintptr(high), p))
	return high, true
}

// place puts each root's descriptor into cmd.ExtraFiles at its own
// number (above the ones placed before it): Exec then only clears its
// close-on-exec flag instead of moving it, which could land on a
// descriptor of the Go runtime.
func (r *rootFDs) place(cmd *exec.Cmd) {
	for _, f := range r.files {
		for len(cmd.ExtraFiles) < int(f.Fd())-3 {
			cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	}
}

func (r *rootFDs) close() {
	for _, f := range r.files {
		f.Close()
	}
	r.files = nil
}

// checkArgCount refuses, with the numbers, a sandbox bwrap would refuse
// with "Exceeded maximum number of arguments".
func checkArgCount(args, cmd []string) error {
	// bwrap's own argv: path, --args N, --seccomp N, --, the command.
	n := len(args) + 2 + 5 + len(cmd)
	if n > bwrap.MaxArgs {
		return fmt.Errorf("bwrap: this policy and command need %d arguments; bwrap accepts at most %d (fewer or shallower roots help, or --backend native)", n, bwrap.MaxArgs)
	}
	return nil
}

func nulJoin(args []string) []byte {
	var b []byte
	for _, a := range args {
		b = append(append(b, a...), 0)
	}
	return b
}

// emptyFile returns the path of an empty file with mode 0000 in the
// runtime dir, bound over denied files.
func emptyFile() (string, error) {
	if _, err := runtimeDir(); err != nil {
		return "", err
	}
	p := emptyFilePath()
	good := func() bool {
		fi, err := os.Lstat(p)
		return err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && fi.Mode().Perm() == 0
	}
	if good() {
		return p, nil
	}
	if _, err := os.Lstat(p); err == nil {
		os.Remove(p) // not the empty file: made again below
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0)
	if errors.Is(err, fs.ErrExist) && good() {
		return p, nil // a launch beside this one made it first
	}
	if err != nil {
		return "", fmt.Errorf("mask file: %w", err)
	}
	f.Close()
	return p, os.Chmod(p, 0)
}
