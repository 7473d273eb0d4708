package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// execSupported: this system can hand the process over (Cmd.Exec).
const execSupported = true

// execInPlace replaces this process with cmd: stdio and ExtraFiles go to
// descriptors 0, 1, 2, 3… as os/exec would place them; every other
// descriptor is already close-on-exec. It returns only on failure.
func execInPlace(cmd *exec.Cmd) error {
	var files []*os.File
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, _ := s.(*os.File)
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			f = null
		}
		files = append(files, f)
	}
	files = append(files, cmd.ExtraFiles...)
	// An entry already at its own number only loses close-on-exec; a nil
	// entry is left alone (whatever holds that number is close-on-exec).
	// The others move: first above the target range, so that placing one
	// never overwrites another that is still to be placed.
	tmp := make([]int, len(files))
	for i, f := range files {
		tmp[i] = -1
		switch {
		case f == nil:
		case int(f.Fd()) == i:
			if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil {
				return fmt.Errorf("exec: %w", err)
			}
		default:
			fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, len(files))
			if err != nil {
				return fmt.Errorf("exec: %w", err)
			}
			tmp[i] = fd
		}
	}
	for i, fd := range tmp {
		if fd < 0 {
			continue
		}
		if err := unix.Dup3(fd, i, 0); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
	}
	if cmd.Dir != "" {
		if err := os.Chdir(cmd.Dir); err != nil {
			return err
		}
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if err := unshareForExec(cmd); err != nil {
		return err
	}
	err := syscall.Exec(cmd.Path, cmd.Args, env)
	return &exec.Error{Name: cmd.Path, Err: err}
}
