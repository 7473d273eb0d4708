package landlock

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/reap"
	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/timing"
)

// The keeper is the init itself, staying in the sandbox above the
// command instead of execing it: a child subreaper, so that every orphan
// of the sandbox (a daemon that forked twice and called setsid, a job
// whose parent exited) is reparented to it rather than to the host's
// init, and a watcher of the launcher, its parent, through a pidfd. When
// the launcher is gone, by any signal, the keeper kills everything below
// it and exits; when the command exits, it kills what the command left
// and exits as the command did. It is outside the sandbox's Landlock
// domain (only the thread that starts the command enters it, and then
// ends), so the domain's scopes keep the sandbox from signalling it
// (ABI 6) or tracing it, and it is not dumpable, so a process of the
// same user outside the domain cannot trace it either without
// CAP_SYS_PTRACE.

// forwarded are the signals the keeper passes on to the command, as the
// command would have had them had it been the launcher's child: the
// launcher's own forwarding (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and what
// anyone may send the sandbox's pid.
var forwarded = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT}

// exitLauncherGone is the keeper's status when it ended the sandbox
// because the launcher went away (no one is left to read it).
const exitLauncherGone = 128 + int(syscall.SIGKILL)

func keep(s *Spec, path string) int {
	launcher, err := watchParent()
	if err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		shown.Sayf(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER): %v", err)
		return exitSetup
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		shown.Sayf(os.Stderr, "prctl(PR_SET_DUMPABLE): %v", err)
		return exitSetup
	}
	tasks, err := reap.OpenTasks()
	if err != nil {
		shown.Sayf(os.Stderr, "%v", err)
		return exitSetup
	}
	// One the launcher's caller ignores (SIGHUP under nohup) stays
	// ignored, and the command inherits it so, as it did from the init.
	var pass []os.Signal
	for _, sig := range forwarded {
		if !signal.Ignored(sig) {
			pass = append(pass, sig)
		}
	}
	ctty := giveUpTerminal()
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, pass...)
	timing.Mark("init", "keeper set up")
	pid, code := startConfined(s, path, ctty)
	if pid <= 0 {
		return code
	}
	timing.Mark("init", "command start")
	// Opened before anything reaps the command: the pidfd is that
	// process, and a signal forwarded after it has ended reaches no
	// other process that got its pid since.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		shown.Sayf(os.Stderr, "pidfd_open of the command: %v", err)
		tasks.KillAll(0)
		return exitSetup
	}
	go func() {
		for s := range sigs {
			unix.PidfdSendSignal(pidfd, s.(syscall.Signal), nil, 0)
		}
	}()
	go func() {
		waitGone(launcher)
		tasks.KillAll(0)
		os.Exit(exitLauncherGone)
	}()
	for {
		var ws unix.WaitStatus
		p, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// ECHILD: the command is gone, reaped by the launcher's
			// watcher, which exits.
			select {}
		}
		if p != pid || !(ws.Exited() || ws.Signaled()) {
			continue // an orphan the kernel reparented here
		}
		timing.Mark("init", "command exit")
		if err := tasks.KillAll(0); err != nil {
			shown.Sayf(os.Stderr, "%v", err)
		}
		timing.Mark("init", "reap")
		exitAs(ws)
	}
}

// watchParent opens a pidfd on the launcher. The launcher started this
// process with PR_SET_PDEATHSIG SIGKILL (Command), so until the pidfd is
// open a launcher that dies takes this process with it, and getppid is
// the launcher; then the death signal is cleared, for this process to
// outlive the launcher long enough to end the sandbox.
func watchParent() (int, error) {
	fd, err := unix.PidfdOpen(unix.Getppid(), 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_open of the launcher (Linux 5.3 or later): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", err)
	}
	if gone(fd, 0) {
		unix.Close(fd)
		return -1, fmt.Errorf("the launcher ended before the command started")
	}
	return fd, nil
}

// gone reports whether the process of pidfd fd has ended, waiting up to
// ms milliseconds (-1: for ever).
func gone(fd, ms int) bool {
	for {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, ms)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n > 0
	}
}

func waitGone(fd int) { gone(fd, -1) }

// giveUpTerminal: when the launcher made this process's session the
// pty's (Cmd.Tty), it hands the terminal on to the command's session,
// for the command to lead its session with the pty as its controlling
// terminal, as it did when the init exec'd it in place. It returns the
// descriptor of that terminal, or -1. TIOCNOTTY sends SIGHUP to this
// process's group (this process alone): ignored for that moment.
func giveUpTerminal() int {
	sid := unix.Getpid()
	for fd := 0; fd < 3; fd++ {
		if s, err := unix.IoctlGetInt(fd, unix.TIOCGSID); err != nil || s != sid {
			continue
		}
		if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || pg != sid {
			return -1
		}
		signal.Ignore(syscall.SIGHUP)
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCNOTTY, 0); errno != 0 {
			return -1
		}
		return fd
	}
	return -1
}

// startConfined starts the command from a thread of its own, which
// confines itself (confine) and forks it: the Landlock domain, the
// seccomp filter, no_new_privs and the dropped capabilities are the
// thread's and pass to the child, while this process's other threads
// (the keeper) stay as they were. The goroutine never unlocks the
// thread, so the runtime ends it when the goroutine returns: nothing
// else ever runs on it. It returns the command's pid, or 0 and the
// init's exit status.
func startConfined(s *Spec, path string, ctty int) (int, int) {
	type result struct{ pid, code int }
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		err := confine(s)
		if err == nil && !s.weakened("seccomp") && !s.weakened("keeper-filter") {
			err = guardKeeper(unix.Getpid(), unix.Gettid())
		}
		if err != nil {
			shown.Sayf(os.Stderr, "%v", err)
			done <- result{0, exitSetup}
			return
		}
		timing.Mark("init", "confined")
		files := make([]uintptr, 3+s.Files)
		for i := range files {
			files[i] = uintptr(i)
		}
		for _, fd := range s.Closed {
			if fd >= 3 && fd < len(files) {
				files[fd] = ^uintptr(0) // closed in the command
			}
		}
		newSession := !s.weakened("new-session")
		attr := &syscall.ProcAttr{Env: os.Environ(), Files: files, Sys: &syscall.SysProcAttr{
			Setsid: newSession, Setctty: newSession && ctty >= 0, Ctty: ctty}}
		pid, err := syscall.ForkExec(path, s.Argv, attr)
		if err != nil {
			shown.Sayf(os.Stderr, "%s: %v", path, err)
			code := exitNoExec
			if err == syscall.ENOENT {
				code = exitNotFound
			}
			done <- result{0, code}
			return
		}
		done <- result{pid, 0}
	}()
	r := <-done
	return r.pid, r.code
}

// exitAs ends this process as the command ended: with its exit status,
// or killed by the same signal (its default action restored and the
// signal unblocked on this thread first), so that the launcher reports
// 128+N as it would for the command itself.
func exitAs(ws unix.WaitStatus) {
	if ws.Exited() {
		os.Exit(ws.ExitStatus())
	}
	sig := ws.Signal()
	runtime.LockOSThread()
	var act [4]uint64 // struct sigaction, all zero: SIG_DFL, no flags, empty mask
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act[0])), 0, 8, 0, 0)
	set := uint64(1) << (uint(sig) - 1)
	unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_UNBLOCK, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	os.Exit(128 + int(sig)) // a signal whose default is not to end a process
}
