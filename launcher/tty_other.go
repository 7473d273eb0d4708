//go:build !linux && !darwin

package launcher

import (
	"fmt"
	"os"
	"os/exec"
)

// IsTerminal reports whether v is an *os.File open on a terminal.
func IsTerminal(any) bool { return false }

type ttySession struct{}

func (c *Cmd) newTtySession(*exec.Cmd) (*ttySession, error) {
	return nil, fmt.Errorf("tty: %w", errOS)
}
func (*ttySession) start()                {}
func (*ttySession) finish()               {}
func (*ttySession) abort()                {}
func (*ttySession) signal(os.Signal) bool { return false }
func (*ttySession) restore()              {}
func (c *Cmd) ttyCtty() int               { return 0 }
