//go:build linux || darwin

package tty

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// A terminal of its own for the sandbox (Cmd.Tty), as ssh -t and docker
// run -t give one: the caller's terminal never enters the sandbox, so
// nothing inside can push input into it (TIOCSTI), change its modes or
// read from it after the command ends (docs/threat-model.md, class 10).
// The command's session has the new pty as its controlling terminal, so
// the line discipline turns Ctrl-C, Ctrl-Z and Ctrl-\ into signals for
// the foreground job inside, SIGWINCH follows resizes and /dev/tty opens.

// stdio are the command's Stdin, Stdout and Stderr, as launcher.Cmd has
// them.
type stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// New opens a pty for a command whose stdio are stdin, stdout and stderr
// (see newSession); inner is the command as it will be started, whose
// stdio that stood for a terminal become the pty.
func New(stdin io.Reader, stdout, stderr io.Writer, inner *exec.Cmd) (*Session, error) {
	return stdio{stdin, stdout, stderr}.newSession(inner)
}

// Stands says which of stdin, stdout and stderr the sandbox's pty stands
// in for (ttyFds).
func Stands(stdin io.Reader, stdout, stderr io.Writer) [3]bool {
	return stdio{stdin, stdout, stderr}.ttyFds()
}

// Ctty is the descriptor (0, 1 or 2) inside that is the pty and becomes
// the session's controlling terminal.
func Ctty(stdin io.Reader, stdout, stderr io.Writer) int {
	return stdio{stdin, stdout, stderr}.ttyCtty()
}

// IsTerminal reports whether v is an *os.File open on a terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// ttyFds says which of Stdin, Stdout and Stderr the sandbox's pty stands
// in for: those that are terminals, or all three when none is.
func (c stdio) ttyFds() (sub [3]bool) {
	some := false
	for i, s := range []any{c.Stdin, c.Stdout, c.Stderr} {
		sub[i] = IsTerminal(s)
		some = some || sub[i]
	}
	if !some {
		sub = [3]bool{true, true, true}
	}
	return sub
}

func (c stdio) ttyCtty() int {
	sub := c.ttyFds()
	for i := range sub {
		if sub[i] {
			return i
		}
	}
	return 0
}

// Session is one command's pty and the relay between it and the
// caller's terminal (or, when the caller has none, Stdin and Stdout).
type Session struct {
	mu     sync.Mutex
	master int // -1 once hung up
	slave  *os.File
	// mf holds master when the runtime's poller can wait on it (polled);
	// closing the master then goes through it.
	mf       *os.File
	polled   bool
	draining atomic.Bool
	// ended: the sandbox has ended; keystrokes the pty will not take
	// any more are dropped rather than waited on.
	ended atomic.Bool
	// drainEnd is when the relay stops reading the sandbox's output
	// after the sandbox has ended, however much more comes (drainMax);
	// set before draining is.
	drainEnd time.Time

	term     int           // the caller's terminal: sizes, modes (-1: none)
	saved    *unix.Termios // term's modes before raw, restored at the end
	raw      bool
	keepRaw  bool         // raw for the whole run (the relay reads the terminal)
	stopped  atomic.Int64 // session inside stopped by suspend, to continue
	inFd     int          // read from the caller's terminal (-1: not)
	inF      *os.File     // the same, opened again for the poller (nil: not)
	inReader io.Reader    // or copied from this reader
	outFd    int          // the caller's terminal written to (-1: not)
	out      io.Writer    // or this writer
	modes    termModes    // what the output switched on in outFd's terminal
	guard    answerGuard  // what the terminal is asked, and answers

	stopIn       [2]int // closed write end stops the input relay
	ctlOut       [2]int // 'd' drain and end, 'h' hang up (when not polled)
	outDone      chan struct{}
	inDone       chan struct{} // closed when relayIn has returned
	finishedOnce sync.Once
}

// newSession opens the pty, gives it the caller's terminal modes and
// size, and puts the caller's terminal in raw mode when keystrokes are to
// be relayed. inner's stdio that stood for a terminal become the pty.
func (c stdio) newSession(inner *exec.Cmd) (*Session, error) {
	ttySignals.ensure()
	m, s, err := openPty()
	if err != nil {
		return nil, err
	}
	// Non-blocking: a command that reads no input must not leave the
	// relay blocked in a write with the lock held.
	if err := unix.SetNonblock(m, true); err != nil {
		unix.Close(m)
		s.Close()
		return nil, err
	}
	t := &Session{master: m, slave: s, term: -1, inFd: -1, outFd: -1,
		stopIn: [2]int{-1, -1}, ctlOut: [2]int{-1, -1}, outDone: make(chan struct{})}
	t.mf, t.polled = pollableMaster(m)
	fail := func(err error) (*Session, error) {
		t.closeAll()
		return nil, err
	}
	if !t.polled {
		if err := cloexecPipe(t.ctlOut[:]); err != nil {
			return fail(err)
		}
	}
	sub := c.ttyFds()
	if testhook.SkipTtyPty {
		sub = [3]bool{}
	}
	t.ends(c, sub)
	if t.inFd >= 0 {
		if t.inF = pollableInput(t.inFd); t.inF == nil {
			if err := cloexecPipe(t.stopIn[:]); err != nil {
				return fail(err)
			}
		}
	}
	if t.term >= 0 {
		if tio, err := unix.IoctlGetTermios(t.term, ioctlGetTermios); err == nil {
			t.saved = tio
			unix.IoctlSetTermios(int(s.Fd()), ioctlSetTermios, tio)
		}
		t.resize()
	}
	if sub[0] {
		inner.Stdin = s
	}
	if sub[1] {
		inner.Stdout = s
	}
	if sub[2] {
		inner.Stderr = s
	}
	if t.inFd >= 0 && t.saved != nil {
		if err := t.makeRaw(); err != nil {
			return fail(err)
		}
		t.keepRaw = true
	}
	return t, nil
}

// startRelay starts the relay's goroutines. Both wait in the runtime's
// poller where they can (relayOutPolled, relayInPolled), so they hold no
// thread while the sandbox runs; they start once it has started, since a
// goroutine being started while cordon forks the sandbox made the fork
// about 1 ms slower (BENCHMARKS.md, interactive).
func (t *Session) startRelay() {
	go t.relayOut()
	if t.inFd >= 0 {
		t.inDone = make(chan struct{})
		go func() { defer close(t.inDone); t.relayIn() }()
	}
}

// ends decides what the relay reads and writes on the caller's side: the
// caller's terminal (the first of Stdin, Stdout, Stderr that is one, for
// sizes and modes), or, when the pty was forced on without one (--tty),
// Stdin and Stdout as plain streams.
func (t *Session) ends(c stdio, sub [3]bool) {
	if sub == [3]bool{true, true, true} && !IsTerminal(c.Stdin) && !IsTerminal(c.Stdout) && !IsTerminal(c.Stderr) {
		t.inReader = c.Stdin
		switch {
		case c.Stdout != nil:
			t.out = c.Stdout
		case c.Stderr != nil:
			t.out = c.Stderr
		default:
			t.out = io.Discard
		}
		return
	}
	std := []any{c.Stdin, c.Stdout, c.Stderr}
	for i, ok := range sub {
		if ok && t.term < 0 {
			t.term = int(std[i].(*os.File).Fd())
		}
	}
	if sub[0] {
		t.inFd = int(c.Stdin.(*os.File).Fd())
	}
	switch {
	case sub[1]:
		t.outFd = int(c.Stdout.(*os.File).Fd())
	case sub[2]:
		t.outFd = int(c.Stderr.(*os.File).Fd())
	default:
		t.outFd = t.inFd // a terminal is open for writing too, as a rule
	}
	if t.inFd < 0 {
		// Stdin is a file or pipe, but keystrokes still come from the
		// terminal, as they would to a program reading /dev/tty (less,
		// fzf): when it is open for reading, as a shell opens it.
		if fl, err := unix.FcntlInt(uintptr(t.outFd), unix.F_GETFL, 0); err == nil && fl&unix.O_ACCMODE == unix.O_RDWR {
			t.inFd = t.outFd
		}
	}
}

// Start, once the sandbox has started, gives the pty's slave end to the
// sandbox alone, so the master reads EIO once every process inside has
// let go of it, and follows the caller's terminal from then on.
func (t *Session) Start() {
	t.slave.Close()
	t.startRelay()
	ttySignals.add(t)
	t.resize() // in case the size changed before the session was added
	if t.inFd < 0 && t.inReader != nil {
		go t.copyIn()
	}
}

// onSignal follows the caller's terminal: a resize (SIGWINCH), or a
// return from a stop (SIGCONT, after fg), after which the shell may have
// reset its modes.
func (t *Session) onSignal(s os.Signal) {
	if s == syscall.SIGCONT {
		if t.keepRaw {
			t.makeRaw()
		}
		t.resize()
		if sid := t.stopped.Swap(0); sid > 0 {
			unix.Kill(-int(sid), syscall.SIGCONT)
		}
		return
	}
	t.resize()
}

// ttySignals passes SIGWINCH and SIGCONT to the running sessions. It
// asks for them once per process and never lets go: each signal the
// runtime starts or stops catching costs a round trip to its signal
// thread, which took 1.4 ms a launch while the sandbox was starting on
// the same cores (BENCHMARKS.md, interactive). Catching both changes
// nothing else: SIGWINCH is ignored by default, and SIGCONT continues a
// stopped process whether caught or not.
var ttySignals sigHub

type sigHub struct {
	once     sync.Once
	mu       sync.Mutex
	sessions map[*Session]bool
}

// ensure starts catching the signals; newSession calls it before the
// sandbox starts, while the machine is quiet.
func (h *sigHub) ensure() {
	h.once.Do(func() {
		h.sessions = map[*Session]bool{}
		c := make(chan os.Signal, 8)
		signal.Notify(c, syscall.SIGWINCH, syscall.SIGCONT)
		go func() {
			for s := range c {
				h.mu.Lock()
				for t := range h.sessions {
					t.onSignal(s)
				}
				h.mu.Unlock()
			}
		}()
	})
}

func (h *sigHub) add(t *Session) {
	h.ensure()
	h.mu.Lock()
	h.sessions[t] = true
	h.mu.Unlock()
}

// remove returns once no signal is being passed to t.
func (h *sigHub) remove(t *Session) {
	h.mu.Lock()
	delete(h.sessions, t)
	h.mu.Unlock()
}

// resize copies the caller's terminal size onto the pty; the kernel then
// sends SIGWINCH to the foreground job inside.
func (t *Session) resize() {
	if t.term < 0 {
		return
	}
	ws, err := unix.IoctlGetWinsize(t.term, unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master >= 0 {
		unix.IoctlSetWinsize(t.master, unix.TIOCSWINSZ, ws)
	}
}

// makeRaw is cfmakeraw on the caller's terminal: every byte typed goes to
// the pty, whose own line discipline does echo, editing and signals.
func (t *Session) makeRaw() error {
	r := *t.saved
	r.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	r.Oflag &^= unix.OPOST
	r.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	r.Cflag &^= unix.CSIZE | unix.PARENB
	r.Cflag |= unix.CS8
	r.Cc[unix.VMIN], r.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(t.term, ioctlSetTermios, &r); err != nil {
		return err
	}
	t.raw = true
	return nil
}

// Restore puts the caller's terminal back as it was, after the output
// written so far.
func (t *Session) Restore() {
	if t.raw {
		unix.IoctlSetTermios(t.term, ioctlSetTermiosDrain, t.saved)
		t.raw = false
	}
}

func (t *Session) writeMaster(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(b) > 0 {
		if t.master < 0 {
			return unix.EIO
		}
		n, err := unix.Write(t.master, b)
		if err == unix.EAGAIN && t.ended.Load() {
			// Nothing inside reads them now: finish must not wait on a
			// full input queue.
			return unix.EIO
		}
		if err == unix.EINTR || err == unix.EAGAIN {
			t.mu.Unlock()
			time.Sleep(time.Millisecond)
			t.mu.Lock()
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Finish, once the sandbox has ended: the rest of its output, then the
// caller's terminal as it was.
func (t *Session) Finish() {
	t.finishedOnce.Do(func() {
		t.ended.Store(true)
		t.drainOut()
		<-t.outDone
		if testhook.TtyKeepReading {
			t.stopIn = [2]int{-1, -1}
			t.inF = nil
		}
		t.stopRelayIn()
		ttySignals.remove(t)
		if t.out == nil {
			// The relay has ended: nothing writes to the terminal
			// after these.
			t.write(t.modes.reset())
			t.guard.settle(t.inFd, t.outFd, !t.raw)
		}
		t.Restore()
		t.closeAll()
	})
}

// stopRelayIn returns once the relay takes no keystroke typed from here
// on.
func (t *Session) stopRelayIn() {
	switch {
	case t.inF != nil:
		t.inF.SetReadDeadline(time.Unix(1, 0))
		if t.inDone != nil {
			<-t.inDone
		}
		t.inF.Close()
		t.inF = nil
	case t.stopIn[1] >= 0:
		unix.Close(t.stopIn[1])
		t.stopIn[1] = -1
		if t.inDone != nil {
			<-t.inDone
		}
	}
}

// Abort undoes newSession when the sandbox did not start.
// The relay has not started (start does that).
func (t *Session) Abort() {
	t.Restore()
	t.slave.Close()
	t.closeAll()
}

func (t *Session) closeAll() {
	t.closeMaster()
	if t.inF != nil {
		t.inF.Close()
		t.inF = nil
	}
	for _, fd := range []*int{&t.stopIn[0], &t.stopIn[1], &t.ctlOut[0], &t.ctlOut[1]} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// IsTerminalFd reports whether descriptor fd is open on a terminal.
func IsTerminalFd(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}

// OpenPty opens a new pseudo-terminal (openPty): its master and its slave.
func OpenPty() (int, *os.File, error) { return openPty() }
