package launcher

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// The command inside bwrap is in a new session (--new-session) with no
// controlling terminal, and nothing outside can give it one. So it starts
// as this same program, argv[1] ttyExecArg, which starts a session of its
// own and makes the pty (the
// descriptor named by argv[2]) its controlling terminal and execs the
// command: argv[3] the path, the rest its argv. The init below runs
// it in any program that links the launcher, before that program's main.
const ttyExecArg = "__cordon-tty-exec"

func init() {
	if len(os.Args) >= 4 && os.Args[1] == ttyExecArg {
		os.Exit(ttyExecMain(os.Args[2:]))
	}
}

func ttyExecMain(a []string) int {
	fd, err := strconv.Atoi(a[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: bad descriptor %q\n", ttyExecArg, a[0])
		return 125
	}
	// bwrap's --new-session session is led by its init (pid 1) when it
	// unshares the pid namespace; the command is then free to lead one of
	// its own. (If it already leads one, setsid fails and changes nothing.)
	unix.Setsid()
	if err := unix.IoctlSetInt(fd, unix.TIOCSCTTY, 0); err != nil {
		fmt.Fprintf(os.Stderr, "cordon: warning: the sandbox's terminal could not be made its controlling terminal (TIOCSCTTY: %v); Ctrl-C and resizes will not reach the command\n", err)
	}
	err = syscall.Exec(a[1], a[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", a[1], err)
	if err == syscall.ENOENT {
		return 127
	}
	return 126
}

// ttyHelper is the program that runs ttyExecMain inside the sandbox: this
// one, when the policy lets the sandbox read and execute it.
func ttyHelper(canon *policy.Canonical) (string, error) { return selfHelper(canon) }

// setsidPaths are util-linux's setsid(1), whose --ctty does what
// ttyExecMain does (setsid, TIOCSCTTY on stdin, exec) for a third of the
// start-up time of a Go program, when the pty is the command's stdin.
// --wait matters only if it must fork (the command already leads its
// process group): it then passes on the command's exit status.
var setsidPaths = []string{"/usr/bin/setsid", "/bin/setsid"}

// ttyArgv is argv as bwrap runs it: behind a helper that makes the pty the
// controlling terminal of the command's session. Without a helper the
// command still gets the pty, but no controlling terminal; a warning says
// so.
func (c *Cmd) ttyArgv(canon *policy.Canonical, argv []string) []string {
	if !c.Tty {
		return argv
	}
	fd := c.ttyCtty()
	// (Under the SkipTtyPty mutation stdin is the caller's terminal, on
	// which setsid would fail and not run the command at all; the own
	// helper warns and runs it, so that the case judges the attack.)
	if fd == 0 && !testhook.SkipTtySetsid && !testhook.SkipTtyPty {
		for _, p := range setsidPaths {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 && canon.Access(p, policy.Read) {
				return append([]string{p, "--ctty", "--wait"}, argv...)
			}
		}
	}
	exe, err := ttyHelper(canon)
	if err != nil {
		w := c.Stderr
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintf(w, "cordon: warning: no controlling terminal inside the sandbox (Ctrl-C, resizes and /dev/tty will not work): %v\n", err)
		return argv
	}
	return append([]string{exe, ttyExecArg, strconv.Itoa(fd), argv[0]}, argv...)
}
