package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// bwrapCmd renders the policy for bwrap and acquires its stubs; the caller
// holds reg's lock.
func (c *Cmd) bwrapCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string, reg *registry) (*exec.Cmd, func(), error) {
	empty, err := emptyFile()
	if err != nil {
		return nil, nil, err
	}
	plan, err := bwrap.Render(canon, bwrap.Options{
		Network:       c.Network,
		EmptyFile:     empty,
		MaskRoot:      maskRootPath(),
		DisableUserns: versionAtLeast(res.Version, 0, 8),
		Chdir:         c.Dir,
		Stat:          reg.stat(canon.Stat),
	})
	argv := append([]string{c.Path}, c.Args[1:]...)
	if c.Tty {
		argv = c.ttyArgv(canon, argv)
		c.ttyInBwrap = true
	}
	if err == nil {
		err = checkArgCount(plan.Args, argv)
	}
	if err == nil {
		err = ensureMasks(plan.Masks)
	}
	if err == nil {
		err = reg.acquire(plan.Stubs, c.StubLinger, writableRoots(canon))
	}
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		if len(reg.mine) == 0 {
			return
		}
		r, err := lockRegistry(reg.dir)
		if err != nil {
			return
		}
		r.me, r.mine, r.reaped = reg.me, reg.mine, reg.reaped
		r.release()
		r.unlock()
	}
	c.handoff = len(reg.mine) == 0 || reg.reaped
	if testhook.BwrapArgs != nil {
		plan.Args = testhook.BwrapArgs(plan.Args)
	}
	if testhook.Seccomp != nil {
		plan.Seccomp = testhook.Seccomp(c.Network)
	}
	// The caller's ExtraFiles keep fds 3..; the seccomp program and the
	// argument list come after them. bwrap closes both once read.
	seccompFD, argsFD := 3+len(c.ExtraFiles), 4+len(c.ExtraFiles)
	filter, err := memFile("cordon-seccomp", plan.Seccomp)
	if err != nil {
		release()
		return nil, nil, err
	}
	if !testhook.SkipSeccomp {
		plan.Args = append(plan.Args, "--seccomp", strconv.Itoa(seccompFD))
	}
	args, err := memFile("cordon-bwrap-args", nulJoin(plan.Args))
	if err != nil {
		filter.Close()
		release()
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, res.Path)
	cmd.Args = append([]string{res.Path, "--args", strconv.Itoa(argsFD), "--"}, argv...)
	c.wire(cmd, env)
	cmd.Dir = "" // bwrap's --chdir decides inside
	cmd.ExtraFiles = append(cmd.ExtraFiles, filter, args)
	return cmd, func() { filter.Close(); args.Close(); release() }, nil
}

// writableRoots lists the roots a sandbox of canon can write: the places
// where it may have swapped a parent of a stub for a link.
func writableRoots(canon *policy.Canonical) []string {
	var out []string
	for _, r := range canon.Roots() {
		if r.Kind == policy.Writable || r.Kind == policy.BaseWritable {
			out = append(out, r.Path)
		}
	}
	return out
}

// checkArgCount refuses, with the numbers, a sandbox bwrap would refuse
// with "Exceeded maximum number of arguments".
func checkArgCount(args, cmd []string) error {
	// bwrap's own argv: path, --args N, --seccomp N, --, the command.
	n := len(args) + 2 + 5 + len(cmd)
	if n > bwrap.MaxArgs {
		return fmt.Errorf("bwrap: this policy and command need %d arguments; bwrap accepts at most %d (fewer or shallower roots help)", n, bwrap.MaxArgs)
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

// memFile puts data in a sealed memory file: no size limit, no temp file
// on disk, no writer goroutine.
func memFile(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("%s: memfd: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	return f, nil
}

// emptyFile returns the path of an empty file with mode 0000 in the
// runtime dir, bound over denied files. The caller holds the stub
// registry, which made sure of the runtime dir.
func emptyFile() (string, error) {
	p := emptyFilePath()
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && fi.Mode().Perm() == 0 {
		return p, nil
	}
	os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0)
	if err != nil {
		return "", fmt.Errorf("mask file: %w", err)
	}
	f.Close()
	return p, os.Chmod(p, 0)
}
