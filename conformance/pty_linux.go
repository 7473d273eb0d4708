package conformance

import (
	"fmt"
	"os"
	"strconv"

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
	if err := makeRaw(int(s.Fd())); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// AttachPty uses an existing terminal (the process's controlling one).
func AttachPty(path string) (*Pty, error) {
	s, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := makeRaw(int(s.Fd())); err != nil {
		s.Close()
		return nil, err
	}
	return &Pty{Slave: s}, nil
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
