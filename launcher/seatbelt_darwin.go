package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/seatbelt"
)

// seatbeltCmd writes the profile to a private file (profiles of thousands
// of roots do not fit in argv) and runs the command under sandbox-exec.
// Paths reach the profile only as -D parameters.
func (c *Cmd) seatbeltCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	opts := seatbelt.Options{Network: c.Network}
	if c.NetPolicy != nil {
		var err error
		if c.net, opts.ProxyPort, env, err = c.newNetSessionTCP(canon, env, c.stderrFor()); err != nil {
			return nil, nil, err
		}
	}
	prof, err := seatbelt.Render(canon, opts)
	if err != nil {
		c.stopNet()
		return nil, nil, err
	}
	dir, err := runtimeDir()
	if err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp(dir, "profile-*.sb")
	if err != nil {
		return nil, nil, fmt.Errorf("seatbelt profile: %w", err)
	}
	release := func() { os.Remove(f.Name()) }
	if _, err := f.WriteString(prof.SBPL); err != nil {
		f.Close()
		release()
		return nil, nil, fmt.Errorf("seatbelt profile: %w", err)
	}
	f.Close()
	path := res.Path
	if path == "" {
		path = sandboxExec
	}
	argv := prof.Argv(f.Name(), append([]string{c.Path}, c.Args[1:]...))
	argv[0] = path
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = argv
	c.wire(cmd, env)
	c.launchCheck = func(pid int) func(*os.ProcessState) error {
		if !stillSandboxExec(pid) {
			return nil
		}
		return func(st *os.ProcessState) error {
			if !st.Exited() {
				return nil // killed (a cancelled context): that is the status
			}
			return seatbeltFailure(c.Path, st.ExitCode(), recheckProfile(path, prof.Argv(f.Name(), []string{"/usr/bin/true"})[1:]))
		}
	}
	return cmd, release, nil
}

// stillSandboxExec waits for process pid to end, without reaping it, and
// reports whether the program it ended as is still sandbox-exec: then
// sandbox-exec never executed the command, and the exit status is its own.
// The process is watched with kqueue (NOTE_EXIT), then its name read from
// the zombie's kinfo_proc. Anything unexpected answers false, which
// reports the status as the command's, as before this check existed. A
// command that is itself named sandbox-exec and fails would be taken for
// it; that costs only the wording of the error.
func stillSandboxExec(pid int) bool {
	if kq, err := unix.Kqueue(); err == nil {
		var ev unix.Kevent_t
		unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
		ev.Fflags = unix.NOTE_EXIT
		changes, events := []unix.Kevent_t{ev}, make([]unix.Kevent_t, 1)
		for {
			// An EV_ERROR event (ESRCH: it has already exited) ends the wait too.
			n, err := unix.Kevent(kq, changes, events, nil)
			if errors.Is(err, unix.EINTR) {
				changes = nil
				continue
			}
			if err != nil || n > 0 {
				break
			}
		}
		unix.Close(kq)
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return false
	}
	return unix.ByteSliceToString(kp.Proc.P_comm[:]) == "sandbox-exec"
}

// recheckProfile applies the launch's profile file and parameters (args,
// sandbox-exec's arguments ending in /usr/bin/true) again, to learn what
// sandbox-exec says about the profile alone.
func recheckProfile(sandboxExec string, args []string) recheck {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sandboxExec, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stderr = &stderr
	err := cmd.Run()
	rc := recheck{stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Exited():
		rc.code = ee.ExitCode()
	case err != nil:
		rc.err = err
	}
	return rc
}
