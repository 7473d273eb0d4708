package tty

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

const (
	ioctlGetTermios      = unix.TCGETS
	ioctlSetTermios      = unix.TCSETS
	ioctlSetTermiosDrain = unix.TCSETSW
	tiocgsid             = unix.TIOCGSID
)

// openPty opens a new pseudo-terminal: the master as a raw descriptor
// (the relay polls it), the slave as a file for the sandbox's stdio.
// Neither becomes this process's controlling terminal.
func openPty() (int, *os.File, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return -1, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		unix.Close(m)
		return -1, nil, fmt.Errorf("pty number: %w", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	s, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(m)
		return -1, nil, fmt.Errorf("open %s: %w", name, err)
	}
	return m, os.NewFile(uintptr(s), name), nil
}

// pollableMaster gives the pty's master (non-blocking) to the runtime's
// poller, so that the relay waits for output without holding a thread;
// ok is false, and the relay polls by itself, when the poller would not
// take it. f owns m either way.
func pollableMaster(m int) (f *os.File, ok bool) {
	f = os.NewFile(uintptr(m), "/dev/ptmx")
	return f, f.SetReadDeadline(time.Time{}) == nil
}

// pollableInput opens the caller's terminal (fd) again, as a file
// description of this process's own, non-blocking (the caller's stays as
// it is), so that the relay waits for keystrokes in the runtime's poller.
// nil when it cannot; the relay then polls fd itself.
func pollableInput(fd int) *os.File {
	n, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var was, now unix.Stat_t
	if unix.Fstat(fd, &was) != nil || unix.Fstat(n, &now) != nil || now.Mode&unix.S_IFMT != unix.S_IFCHR || now.Rdev != was.Rdev {
		unix.Close(n)
		return nil
	}
	f := os.NewFile(uintptr(n), "/dev/tty")
	if f.SetReadDeadline(time.Time{}) != nil {
		f.Close()
		return nil
	}
	return f
}

// waitReadable polls fds for input (or hang-up); timeout in milliseconds,
// -1 for none. ready is all false when the timeout ran out.
func waitReadable(fds []int, timeout int) ([]bool, error) {
	pfds := make([]unix.PollFd, len(fds))
	for i, fd := range fds {
		pfds[i] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	}
	for {
		_, err := unix.Poll(pfds, timeout)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		ready := make([]bool, len(fds))
		for i := range pfds {
			ready[i] = pfds[i].Revents != 0
		}
		return ready, nil
	}
}

func cloexecPipe(p []int) error { return unix.Pipe2(p, unix.O_CLOEXEC) }

// tcflushIn discards what the terminal fd has received and not yet been
// read.
func tcflushIn(fd int) { unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
