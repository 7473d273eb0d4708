package conformance

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	attacks["tiocsti"] = tiocsti
	attacks["tiocsti-steal"] = func(a []string, out, errw io.Writer) int {
		// Become a session leader with the terminal as controlling tty, if
		// the kernel lets us (it must not: the tty belongs to cordon's
		// session), then inject.
		unix.Setsid()
		if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 1); err != nil {
			fmt.Fprintln(errw, "TIOCSCTTY:", err)
		} else {
			mark(out, "CTTY")
		}
		return tiocsti(a, out, errw)
	}
	attacks["ptrace"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 1 {
			return usage(errw, "ptrace PID")
		}
		pid, err := strconv.Atoi(a[0])
		if err != nil {
			return usage(errw, "ptrace PID")
		}
		runtime.LockOSThread()
		if err := unix.PtraceAttach(pid); err != nil {
			fmt.Fprintln(errw, "PTRACE_ATTACH:", err)
		} else {
			mark(out, "PTRACE")
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WALL, nil)
			unix.PtraceDetach(pid)
		}
		if err := unix.PtraceSeize(pid); err != nil {
			fmt.Fprintln(errw, "PTRACE_SEIZE:", err)
		} else {
			mark(out, "PTRACE")
			unix.PtraceDetach(pid)
		}
		return 0
	}
	attacks["exchange"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "exchange A B")
		}
		if err := unix.Renameat2(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], unix.RENAME_EXCHANGE); err != nil {
			fmt.Fprintln(errw, "renameat2 RENAME_EXCHANGE:", err)
			return 1
		}
		mark(out, "RENAMED")
		return 0
	}
	attacks["userns"] = func(a []string, out, errw io.Writer) int {
		// A nested user and mount namespace, mapped to root, running CMD:
		// from there a mount made by the sandbox might be undone.
		if len(a) == 0 {
			return usage(errw, "userns CMD [ARG]...")
		}
		cmd := exec.Command(a[0], a[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, errw
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
		}
		if err := cmd.Start(); err != nil {
			// Mapping root needs CAP_SETFCAP above; an unmapped namespace
			// still has every capability inside it.
			fmt.Fprintln(errw, "new user namespace mapped to root:", err)
			cmd = exec.Command(a[0], a[1:]...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, out, errw
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(errw, "new user namespace:", err)
				return 1
			}
		}
		mark(out, "USERNS")
		cmd.Wait()
		return 0
	}
	attacks["umount"] = func(a []string, out, errw io.Writer) int {
		for _, p := range a {
			for _, fl := range []int{0, unix.MNT_DETACH, unix.MNT_FORCE} {
				if err := unix.Unmount(p, fl); err != nil {
					fmt.Fprintf(errw, "umount %s (%#x): %v\n", p, fl, err)
				} else {
					mark(out, "UMOUNT")
				}
			}
		}
		return 0
	}
	attacks["remount"] = func(a []string, out, errw io.Writer) int {
		for _, p := range a {
			for _, fl := range []uintptr{unix.MS_REMOUNT | unix.MS_BIND, unix.MS_REMOUNT} {
				if err := unix.Mount("", p, "", fl, ""); err != nil {
					fmt.Fprintf(errw, "remount %s rw (%#x): %v\n", p, fl, err)
				} else {
					mark(out, "REMOUNT")
				}
			}
		}
		return 0
	}
}

// tiocsti pushes TEXT into the input of the terminal on stdin, stdout and
// stderr, as if typed: what a parent shell would read and run once the
// sandbox exits.
func tiocsti(a []string, out, errw io.Writer) int {
	text := "echo injected\n"
	if len(a) > 0 {
		text = a[0]
	}
	for fd := 0; fd <= 2; fd++ {
		injected := 0
		for i := 0; i < len(text); i++ {
			c := text[i]
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			if e != 0 {
				fmt.Fprintf(errw, "TIOCSTI fd %d: %v\n", fd, e)
				break
			}
			injected++
		}
		if injected > 0 {
			mark(out, "TIOCSTI")
		}
	}
	return 0
}

func init() {
	// exchange-loop A B READY STOP: swap A and B (renameat2
	// RENAME_EXCHANGE, atomic) as fast as it can until STOP exists; touch READY once started. It
	// ends with A and B where they began.
	attacks["exchange-loop"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 4 {
			return usage(errw, "exchange-loop A B READY STOP")
		}
		if err := os.WriteFile(a[2], nil, 0o644); err != nil {
			fmt.Fprintln(errw, err)
			return 1
		}
		swapped := false
		for {
			if _, err := os.Lstat(a[3]); err == nil && !swapped {
				mark(out, "SWAPPED")
				return 0
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], unix.RENAME_EXCHANGE); err != nil {
				fmt.Fprintln(errw, "renameat2 RENAME_EXCHANGE:", err)
				return 1
			}
			swapped = !swapped
		}
	}
}

func init() {
	// A process that leaves its process group for one of its own (not
	// its session), then runs PROGRAM: a kill of the command's group
	// misses it (process-outlive-killed-launcher).
	attacks["own-group"] = func(a []string, out, errw io.Writer) int {
		if len(a) == 0 {
			return usage(errw, "own-group PROGRAM [ARG]...")
		}
		if err := unix.Setpgid(0, 0); err != nil {
			fmt.Fprintln(errw, "setpgid:", err)
			return 1
		}
		err := syscall.Exec(a[0], a, os.Environ())
		fmt.Fprintln(errw, "exec:", err)
		return 1
	}
}
