//go:build linux || darwin

package tty

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// settleMax bounds how long settle waits for the terminal's answer: a
// terminal that never answers DA1 (a serial line, a dumb terminal) costs
// that much once, at the end of a run that wrote escape sequences. It is
// generous because the answer comes only once the terminal has drawn
// everything before it: the last 12 KB a pty holds of 90 KB of ESC # 8
// took tmux 0.7 s on a loaded machine, and over ssh more is in flight.
const settleMax = 5 * time.Second

// da1Query is the query whose answer marks that every earlier one has
// been answered: the one every terminal answers (DA1).
const da1Query = "\x1b[c"

// settle, once the sandbox has ended and its output has reached the
// terminal (out), asks the terminal for its device attributes and reads
// its input (in, the same terminal) up to that answer, discarding what it
// reads: the answers to what the sandbox asked, and whatever was typed
// meanwhile. Nothing is done when the sandbox wrote no escape sequence
// (nothing was asked). The terminal must be in non-canonical mode, as
// the pty's relay leaves it; with cooked it switches that off for the
// while. Past settleMax the terminal's input is flushed instead.
func (g *answerGuard) settle(in, out int, cooked bool) {
	if !g.asked || testhook.SkipTermSettle || !sameTerminal(in, out) {
		return
	}
	if cooked {
		tio, err := unix.IoctlGetTermios(in, ioctlGetTermios)
		if err != nil {
			return
		}
		r := *tio
		r.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL
		r.Cc[unix.VMIN], r.Cc[unix.VTIME] = 1, 0
		if unix.IoctlSetTermios(in, ioctlSetTermios, &r) != nil {
			return
		}
		defer unix.IoctlSetTermios(in, ioctlSetTermios, tio)
	}
	if !writeAll(out, []byte(da1Query)) {
		return
	}
	want := g.pending() + 1
	end := time.Now().Add(settleMax)
	var scan answerScan
	buf := make([]byte, 4096)
	for want > 0 {
		left := time.Until(end)
		if left <= 0 {
			tcflushIn(in)
			return
		}
		ready, err := waitReadable([]int{in}, int(left/time.Millisecond)+1)
		if err != nil {
			return
		}
		if !ready[0] {
			continue
		}
		n, err := unix.Read(in, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if n <= 0 {
			return // the terminal is gone
		}
		want -= scan.feed(buf[:n])
	}
}

// sameTerminal reports whether descriptors a and b are one terminal.
func sameTerminal(a, b int) bool {
	if a < 0 || b < 0 {
		return false
	}
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return false
	}
	if _, err := unix.IoctlGetTermios(a, ioctlGetTermios); err != nil {
		return false
	}
	return sa.Mode&unix.S_IFMT == unix.S_IFCHR && sa.Rdev == sb.Rdev
}

func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR || err == unix.EAGAIN {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}
