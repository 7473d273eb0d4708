package tty

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	ioctlGetTermios      = unix.TIOCGETA
	ioctlSetTermios      = unix.TIOCSETA
	ioctlSetTermiosDrain = unix.TIOCSETAW
	// No TIOCGSID here: sandbox-exec execs the command, so the
	// launcher's child is the session leader itself.
	tiocgsid = 0
)

// pollableMaster: the relay polls the master itself here; kqueue's
// readiness for terminals has been unreliable on macOS (tmux turns it
// off there).
func pollableMaster(int) (*os.File, bool) { return nil, false }

// pollableInput: the relay polls the caller's terminal itself here too.
func pollableInput(int) *os.File { return nil }

// openPty is posix_openpt, grantpt, unlockpt and ptsname by hand (no cgo).
func openPty() (int, *os.File, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (int, *os.File, error) {
		unix.Close(m)
		return -1, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := ioctl(m, unix.TIOCPTYGRANT, 0); err != nil {
		return fail("grant pty", err)
	}
	if err := ioctl(m, unix.TIOCPTYUNLK, 0); err != nil {
		return fail("unlock pty", err)
	}
	var name [128]byte
	if err := ioctl(m, unix.TIOCPTYGNAME, uintptr(unsafe.Pointer(&name[0]))); err != nil {
		return fail("pty name", err)
	}
	path := string(name[:bytes.IndexByte(name[:], 0)])
	s, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+path, err)
	}
	return m, os.NewFile(uintptr(s), path), nil
}

func ioctl(fd int, req uint, arg uintptr) error {
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(req), arg)
	if e != 0 {
		return e
	}
	return nil
}

// waitReadable is select(2): macOS's poll(2) does not support terminals.
// timeout in milliseconds, -1 for none.
func waitReadable(fds []int, timeout int) ([]bool, error) {
	for {
		var set unix.FdSet
		nfd := 0
		for _, fd := range fds {
			set.Set(fd)
			nfd = max(nfd, fd+1)
		}
		var tv *unix.Timeval
		if timeout >= 0 {
			t := unix.NsecToTimeval(int64(timeout) * 1e6)
			tv = &t
		}
		_, err := unix.Select(nfd, &set, nil, nil, tv)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		ready := make([]bool, len(fds))
		for i, fd := range fds {
			ready[i] = set.IsSet(fd)
		}
		return ready, nil
	}
}

// cloexecPipe is pipe2(O_CLOEXEC), which macOS lacks: under ForkLock, so
// no child started meanwhile inherits the pipe.
func cloexecPipe(p []int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p); err != nil {
		return err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return nil
}

// tcflushIn discards what the terminal fd has received and not yet been
// read.
func tcflushIn(fd int) {
	unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, 1) // FREAD
}
