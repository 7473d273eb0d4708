//go:build !linux

package conformance

import (
	"errors"
	"os"
	"time"
)

// Pty is a pseudo-terminal the harness owns (Linux only for now).
type Pty struct {
	Master, Slave *os.File
}

var errNoPty = errors.New("the pty harness is implemented for Linux only")

func OpenPty() (*Pty, error)          { return nil, errNoPty }
func AttachPty(string) (*Pty, error)  { return nil, errNoPty }
func OpenTerminal() (*Pty, error)     { return nil, errNoPty }
func (p *Pty) Resize(int, int) error  { return errNoPty }
func (p *Pty) State() (string, error) { return "", errNoPty }
func (p *Pty) Raw() bool              { return false }
func (p *Pty) Pending() (int, error)  { return 0, errNoPty }
func (p *Pty) Flush()                 {}
func (p *Pty) Close()                 {}

func (p *Pty) ReadLine(time.Time) (string, error) { return "", errNoPty }
