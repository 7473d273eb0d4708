package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Pty is a pseudo-terminal the harness owns: the sandbox gets the slave as
// its terminal, and the harness checks the slave's input queue, which is
// where TIOCSTI injects what a shell would later read.
type Pty struct {
	Master, Slave *os.File
}

// OpenPty opens a new pty in raw mode (so every injected byte is counted,
// not only whole lines).
func OpenPty() (*Pty, error) {
	p, err := OpenTerminal()
	if err != nil {
		return nil, err
	}
	if err := makeRaw(int(p.Slave.Fd())); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// OpenTerminal opens a new pty as a terminal emulator would: cooked mode
// with echo, 24 rows of 80 columns.
func OpenTerminal() (*Pty, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("open pty slave: %w", err)
	}
	p := &Pty{Master: m, Slave: s}
	if err := p.Resize(24, 80); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Resize sets the terminal's size, as a terminal emulator's window does:
// the kernel sends SIGWINCH to its foreground job.
func (p *Pty) Resize(rows, cols int) error {
	return unix.IoctlSetWinsize(int(p.Slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
}

// State is the terminal's modes and size, printed: what a program may
// change on a terminal it holds, and must not on the user's.
func (p *Pty) State() (string, error) {
	t, err := unix.IoctlGetTermios(int(p.Slave.Fd()), unix.TCGETS)
	if err != nil {
		return "", err
	}
	ws, err := unix.IoctlGetWinsize(int(p.Slave.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("iflag %#o oflag %#o cflag %#o lflag %#o cc %v size %dx%d",
		t.Iflag, t.Oflag, t.Cflag, t.Lflag, t.Cc, ws.Row, ws.Col), nil
}

// Raw reports whether the terminal is in raw mode (no echo, no lines).
func (p *Pty) Raw() bool {
	t, err := unix.IoctlGetTermios(int(p.Slave.Fd()), unix.TCGETS)
	return err == nil && t.Lflag&(unix.ECHO|unix.ICANON) == 0
}

// AttachPty uses an existing terminal (the process's controlling one),
// and its master side when $EnvCttyMaster names a descriptor open on it.
func AttachPty(path string) (*Pty, error) {
	s, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := makeRaw(int(s.Fd())); err != nil {
		s.Close()
		return nil, err
	}
	p := &Pty{Slave: s}
	if fd, err := strconv.Atoi(os.Getenv(EnvCttyMaster)); err == nil {
		if m, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3); err == nil {
			p.Master = os.NewFile(uintptr(m), "ptmx")
		}
	}
	return p, nil
}

func makeRaw(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("pty: %w", err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

// Pending is how many bytes wait in the terminal's input queue.
func (p *Pty) Pending() (int, error) {
	return unix.IoctlGetInt(int(p.Slave.Fd()), unix.TIOCINQ)
}

// Flush drops pending input.
func (p *Pty) Flush() { unix.IoctlSetInt(int(p.Slave.Fd()), unix.TCFLSH, unix.TCIFLUSH) }

// Close closes both ends.
func (p *Pty) Close() {
	if p.Master != nil {
		p.Master.Close()
	}
	p.Slave.Close()
}

// ReadLine reads the terminal's input up to a newline, as the user's
// shell would read its next line, waiting until end at most.
func (p *Pty) ReadLine(end time.Time) (string, error) {
	fd := int(p.Slave.Fd())
	var line []byte
	buf := make([]byte, 256)
	for !strings.Contains(string(line), "\n") {
		left := time.Until(end)
		if left <= 0 {
			return string(line), fmt.Errorf("no whole line in the terminal's input (%q so far)", line)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR || n == 0 {
			continue
		}
		if err != nil {
			return string(line), fmt.Errorf("poll the terminal: %w", err)
		}
		n, err = unix.Read(fd, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if n <= 0 {
			return string(line), fmt.Errorf("read the terminal: %v", err)
		}
		line = append(line, buf[:n]...)
	}
	return string(line), nil
}
