package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) bwrapCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	empty, err := emptyFile()
	if err != nil {
		return nil, nil, err
	}
	reg, err := openRegistry()
	if err != nil {
		return nil, nil, err
	}
	plan, err := bwrap.Render(canon, bwrap.Options{
		Network:       c.Network,
		EmptyFile:     empty,
		DisableUserns: versionAtLeast(res.Version, 0, 8),
		Chdir:         c.Dir,
		Stat:          reg.stat,
	})
	if err == nil {
		err = reg.acquire(plan.Stubs)
	}
	reg.unlock()
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		if len(reg.mine) == 0 {
			return
		}
		r, err := openRegistry()
		if err != nil {
			return
		}
		r.me, r.mine = reg.me, reg.mine
		r.release()
		r.unlock()
	}
	args, err := argsFile(plan.Args)
	if err != nil {
		release()
		return nil, nil, err
	}
	// The caller's ExtraFiles keep fds 3.., the argument list comes last.
	fd := 3 + len(c.ExtraFiles)
	cmd := exec.CommandContext(ctx, res.Path)
	cmd.Args = append([]string{res.Path, "--args", strconv.Itoa(fd), "--", c.Path}, c.Args[1:]...)
	c.wire(cmd, env)
	cmd.Dir = "" // bwrap's --chdir decides inside
	cmd.ExtraFiles = append(cmd.ExtraFiles, args)
	return cmd, func() { args.Close(); release() }, nil
}

// argsFile puts bwrap's arguments, NUL-separated, in a sealed memory file:
// no size limit, no temp file on disk, no writer goroutine.
func argsFile(args []string) (*os.File, error) {
	fd, err := unix.MemfdCreate("cordon-bwrap-args", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("bwrap args: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "cordon-bwrap-args")
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte(0)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, fmt.Errorf("bwrap args: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("bwrap args: %w", err)
	}
	unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	return f, nil
}
