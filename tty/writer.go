//go:build linux || darwin

package tty

import (
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Without a pty of its own the sandbox writes to a pipe that cordon
// copies to the caller's terminal (launcher's replaceTerminals): Writer
// is that copy.

// NewWriter is the Writer for terminal f; stdin is the command's Stdin,
// read for the terminal's answers at the end when it is the same
// terminal (else f itself, when it is open for reading).
func NewWriter(f *os.File, stdin io.Reader) *Writer {
	w := &Writer{f: f, in: -1}
	if in, ok := stdin.(*os.File); ok && IsTerminal(in) && SameFile(in, f) {
		w.in = int(in.Fd())
	} else if fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err == nil && fl&unix.O_ACCMODE == unix.O_RDWR {
		w.in = int(f.Fd())
	}
	return w
}

// Writer copies the sandbox's output to the caller's terminal, but
// its clipboard queries, and follows the modes it switches on and what it
// asks the terminal.
type Writer struct {
	mu    sync.Mutex
	f     *os.File
	in    int // the same terminal open for reading (-1: none)
	modes termModes
	guard answerGuard
}

func (w *Writer) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.guard.out(b)
	w.modes.feed(o)
	if _, err := w.f.Write(o); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Reset switches off what the sandbox's output left switched on, and
// reads the terminal's answers to what it asked (nothing reads them while
// it runs: its stdin is not the terminal).
func (w *Writer) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.modes.reset(); len(r) > 0 {
		w.f.Write(r)
	}
	w.guard.settle(w.in, int(w.f.Fd()), true)
}

// SameFile reports whether a and b are the same terminal.
func SameFile(a, b *os.File) bool {
	ai, err := a.Stat()
	if err != nil {
		return false
	}
	bi, err := b.Stat()
	return err == nil && os.SameFile(ai, bi)
}
