//go:build !linux && !darwin

package tty

import (
	"errors"
	"io"
	"os"
	"os/exec"
)

// IsTerminal reports whether v is an *os.File open on a terminal.
func IsTerminal(any) bool { return false }

// IsTerminalFd reports whether descriptor fd is open on a terminal.
func IsTerminalFd(int) bool { return false }

// Session is a command's pty; there is none on this system.
type Session struct{}

func New(io.Reader, io.Writer, io.Writer, *exec.Cmd) (*Session, error) {
	return nil, errors.New("tty: not supported on this operating system")
}
func Stands(io.Reader, io.Writer, io.Writer) [3]bool { return [3]bool{} }
func Ctty(io.Reader, io.Writer, io.Writer) int       { return 0 }
func (*Session) Start()                              {}
func (*Session) Finish()                             {}
func (*Session) Abort()                              {}
func (*Session) Signal(os.Signal) bool               { return false }
func (*Session) Restore()                            {}
