//go:build linux || darwin

package tty

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The relay between the caller's side and the pty (Session): keystrokes
// in, output out, and the suspend key a command without job control would
// otherwise swallow.

// relayIn copies keystrokes from the caller's terminal to the pty until
// told to stop; it reads only what is there, so that no keystroke typed
// after the command ends is taken from the caller.
func (t *Session) relayIn() {
	if t.inF != nil {
		t.relayInPolled(t.inF)
		return
	}
	buf := make([]byte, 4096)
	for {
		ready, err := waitReadable([]int{t.inFd, t.stopIn[0]}, -1)
		if err != nil || ready[1] {
			return
		}
		if !ready[0] {
			continue
		}
		n, err := unix.Read(t.inFd, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if n > 0 {
			if !t.typed(buf[:n]) {
				return
			}
			continue
		}
		// The caller's terminal is gone: hang up the sandbox's too.
		t.hangup()
		return
	}
}

// relayInPolled is relayIn through the runtime's poller (Linux), from the
// caller's terminal opened again (pollableInput), f: told to stop, its
// read deadline passes.
func (t *Session) relayInPolled(f *os.File) {
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if !t.typed(buf[:n]) {
				return
			}
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
			return
		}
		t.hangup() // the caller's terminal is gone (EOF, EIO)
		return
	}
}

// typed passes keystrokes to the pty; false once the pty is gone.
func (t *Session) typed(b []byte) bool {
	t.guard.relayed(b)
	if i := t.suspendKey(b); i >= 0 {
		if t.writeMaster(b[:i]) != nil {
			return false
		}
		t.suspend()
		b = b[i+1:]
	}
	return t.writeMaster(b) == nil
}

// suspendKey is where in b the suspend key (Ctrl-Z) is, when typing it
// would do nothing inside but should, as outside, stop the command and
// give the user's shell back: the command runs in the foreground, without
// a shell's job control (the process group is then orphaned, and the
// kernel discards SIGTSTP), and does not ignore or catch SIGTSTP itself.
// -1 otherwise: the key goes to the pty as typed.
func (t *Session) suspendKey(b []byte) int {
	if !t.keepRaw || bytes.IndexFunc(b, func(r rune) bool { return r < 0x20 }) < 0 || !canStopSelf() {
		return -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master < 0 {
		return -1
	}
	tio, err := unix.IoctlGetTermios(t.master, ioctlGetTermios)
	if err != nil || tio.Lflag&unix.ISIG == 0 || tio.Cc[unix.VSUSP] == 0 {
		return -1
	}
	i := bytes.IndexByte(b, tio.Cc[unix.VSUSP])
	if i < 0 {
		return -1
	}
	pgrp, err1 := unix.IoctlGetInt(t.master, unix.TIOCGPGRP)
	sid, err2 := unix.IoctlGetInt(t.master, tiocgsid)
	if err1 != nil || err2 != nil || tiocgsid == 0 || pgrp != sid || !defaultAction(sid, syscall.SIGTSTP) {
		return -1
	}
	t.stopped.Store(int64(sid))
	return i
}

// suspend stops the command (SIGSTOP: the kernel would discard SIGTSTP),
// gives the user's terminal back as it was, and stops the launcher the
// way Ctrl-Z would have; SIGCONT (fg, bg) undoes it all.
func (t *Session) suspend() {
	sid := int(t.stopped.Load())
	unix.Kill(-sid, syscall.SIGSTOP)
	t.Restore()
	unix.Kill(0, syscall.SIGTSTP)
}

// canStopSelf: the launcher's process group is a job of a shell (its
// parent leads another group of the same session), so a stop is seen and
// can be undone with fg.
func canStopSelf() bool {
	pp := os.Getppid()
	ppg, err1 := unix.Getpgid(pp)
	psid, err2 := unix.Getsid(pp)
	sid, err3 := unix.Getsid(0)
	return err1 == nil && err2 == nil && err3 == nil && ppg != unix.Getpgrp() && psid == sid
}

// defaultAction reports whether process pid neither ignores nor catches
// sig (/proc/PID/status).
func defaultAction(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	bit := uint64(1) << (uint(sig) - 1)
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "SigIgn" && k != "SigCgt") {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil || mask&bit != 0 {
			return false
		}
	}
	return true
}

// copyIn copies a non-terminal Stdin to the pty and ends it with the
// end-of-file character, as typing Ctrl-D would.
func (t *Session) copyIn() {
	buf := make([]byte, 4096)
	last := byte('\n')
	for {
		n, err := t.inReader.Read(buf)
		if n > 0 {
			last = buf[n-1]
			if t.writeMaster(buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			eof := []byte{4}
			if t.saved != nil {
				eof[0] = t.saved.Cc[unix.VEOF]
			}
			if last != '\n' {
				eof = append(eof, eof[0]) // the first ends the pending line
			}
			t.writeMaster(eof)
			return
		}
	}
}

// relayOut copies the pty's output to the caller until the sandbox lets go
// of the pty (EIO), or, once told to drain, until it has been quiet for a
// moment (drainQuiet): with no pid namespace a leftover process could hold
// it forever.
func (t *Session) relayOut() {
	defer close(t.outDone)
	if t.polled {
		t.relayOutPolled()
		return
	}
	buf := make([]byte, 32*1024)
	draining := false
	var drainEnd time.Time
	for {
		fds := []int{t.master, t.ctlOut[0]}
		timeout := -1
		if draining {
			left := min(drainQuiet, time.Until(drainEnd))
			if left <= 0 {
				return
			}
			fds, timeout = fds[:1], int(left/time.Millisecond)
		}
		ready, err := waitReadable(fds, timeout)
		if err != nil {
			return
		}
		if len(ready) > 1 && ready[1] {
			var b [1]byte
			unix.Read(t.ctlOut[0], b[:])
			if b[0] == 'h' {
				t.closeMaster()
				return
			}
			draining, drainEnd = true, time.Now().Add(drainMax)
			continue
		}
		if !ready[0] {
			return // drained
		}
		n, err := unix.Read(t.master, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if n <= 0 {
			return // EIO: no process inside holds the pty any more
		}
		t.write(buf[:n])
	}
}

// drainQuiet is how long the output must be quiet, once the sandbox has
// ended, before the relay stops reading it.
const drainQuiet = 100 * time.Millisecond

// drainMax bounds the drain: a process left inside (Seatbelt has no pid
// namespace to end it) that keeps writing must not keep cordon reading.
const drainMax = time.Second

// relayOutPolled is relayOut through the runtime's poller (Linux): while
// it waits it holds no thread. Draining is a read deadline pushed on by
// each read; hanging up closes the master, which ends the read.
func (t *Session) relayOutPolled() {
	buf := make([]byte, 32*1024)
	for {
		n, err := t.mf.Read(buf)
		if n > 0 {
			t.write(buf[:n])
			if t.draining.Load() {
				d := time.Now().Add(drainQuiet)
				if d.After(t.drainEnd) {
					d = t.drainEnd
				}
				t.mf.SetReadDeadline(d)
			}
		}
		if err != nil {
			return // EIO: no process inside holds the pty; drained; hung up
		}
	}
}

// drainOut tells relayOut that the sandbox has ended.
func (t *Session) drainOut() {
	if !t.polled {
		unix.Write(t.ctlOut[1], []byte{'d'})
		return
	}
	t.drainEnd = time.Now().Add(drainMax)
	t.draining.Store(true)
	if t.mf.SetReadDeadline(time.Now().Add(drainQuiet)) != nil {
		t.closeMaster()
	}
}

func (t *Session) write(b []byte) {
	b = t.guard.out(b)
	if t.out != nil {
		t.out.Write(b)
		return
	}
	t.modes.feed(b)
	for len(b) > 0 {
		n, err := unix.Write(t.outFd, b)
		if err == unix.EINTR || err == unix.EAGAIN {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			return // output lost with the caller's terminal; keep draining
		}
		b = b[n:]
	}
}

// hangup closes the master, as a terminal that goes away does: the kernel
// sends SIGHUP to the session inside.
func (t *Session) hangup() {
	if t.polled {
		t.closeMaster()
		return
	}
	unix.Write(t.ctlOut[1], []byte{'h'})
}

func (t *Session) closeMaster() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master >= 0 {
		if t.mf != nil {
			t.mf.Close()
		} else {
			unix.Close(t.master)
		}
		t.master = -1
	}
}

// Signal passes a signal sent to the launcher on as a terminal would:
// SIGINT and SIGQUIT to the foreground job inside, SIGTERM to the
// command (the session leader), SIGHUP as a hang-up. It reports false when
// there is no job to send it to (no controlling terminal inside).
func (t *Session) Signal(s os.Signal) bool {
	if s == syscall.SIGHUP {
		t.hangup()
		return true
	}
	req := uint(unix.TIOCGPGRP)
	if s == syscall.SIGTERM {
		if tiocgsid == 0 {
			return false
		}
		req = tiocgsid
	}
	t.mu.Lock()
	id := -1
	if t.master >= 0 {
		if v, err := unix.IoctlGetInt(t.master, req); err == nil && v > 0 {
			id = v
		}
	}
	t.mu.Unlock()
	sig, ok := s.(syscall.Signal)
	if id < 0 || !ok {
		return false
	}
	if req == tiocgsid {
		return unix.Kill(id, sig) == nil
	}
	return unix.Kill(-id, sig) == nil
}
