package conformance

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// EnvCtty names the controlling terminal of a process that runs cases
// through the launcher API (the mutation check gives its children one):
// the tty cases then use it, since the launcher starts the sandbox in this
// process's session. EnvCttyMaster, when set, is the number of a
// descriptor open on that terminal's master side, to type into it.
const (
	EnvCtty       = "CORDON_CONFORMANCE_CTTY"
	EnvCttyMaster = "CORDON_CONFORMANCE_CTTY_MASTER"
)

// ttyMu serializes the tty cases: through the launcher API they share one
// terminal, whose input queue and modes they judge.
var ttyMu sync.Mutex

// ttyCase runs script with a terminal of the case's as the launching
// process's stdin and controlling terminal (the user's terminal), with
// cordon's interactive mode (its own pty for the sandbox, relayed) or
// without it, then judges the host: the user's terminal.
func ttyCase(name, summary string, interactive bool, script string, judge func(h *H, t ttyRun, o Output)) Case {
	return Case{Name: name, Class: 10, Summary: summary, Run: func(h *H) {
		_, p := h.ws()
		var pty *Pty
		var err error
		l := Launch{Policy: p, Dir: p.Workspace, Argv: sandboxScript(script), Interactive: interactive}
		if h.x.Name() == "launcher" {
			path := os.Getenv(EnvCtty)
			if path == "" {
				h.NotApplicable("through the launcher API, needs a controlling pty named by $%s", EnvCtty)
			}
			pty, err = AttachPty(path)
			l.Stdin = pty.Slave
		} else {
			pty, err = OpenPty()
			l.Tty = pty.Slave
		}
		if err != nil {
			h.NotApplicable("%v", err)
		}
		defer pty.Close()
		ttyMu.Lock()
		defer ttyMu.Unlock()
		pty.Flush()
		before, err := pty.State()
		if err != nil {
			h.Fatalf("pty: %v", err)
		}
		o := h.Launch(l)
		judge(h, ttyRun{pty: pty, before: before, ws: p.Workspace}, o)
		pty.Flush()
	}}
}

// ttyRun is what a tty case's judge looks at: the user's terminal, its
// state before the launch, the workspace.
type ttyRun struct {
	pty    *Pty
	before string
	ws     string
}

// noInjection: nothing waits in the user's terminal's input queue, where
// TIOCSTI puts what the user's shell would read and run next.
func noInjection(h *H, t ttyRun, o Output) {
	time.Sleep(10 * time.Millisecond)
	n, err := t.pty.Pending()
	if err != nil {
		h.Fatalf("pty: %v", err)
	}
	if n > 0 {
		h.Errorf("%d bytes were injected into the terminal's input:\n%s", n, o)
	}
	h.Refuse(o, "TIOCSTI")
}

// sameTerminal: the user's terminal has the modes and size it had.
func sameTerminal(h *H, t ttyRun, o Output) {
	after, err := t.pty.State()
	if err != nil {
		h.Fatalf("pty: %v", err)
	}
	if after != t.before {
		h.Errorf("the user's terminal changed:\nbefore: %s\nafter:  %s\n%s", t.before, after, o)
	}
}

// Class 10: the terminal — TIOCSTI injection into the parent's tty,
// taking it over, reading from it after the sandbox ends; with and
// without cordon's interactive mode.
func ttyCases() []Case {
	const (
		tiocsti = `"$ATTACK" __attack tiocsti "$(printf 'echo pwned\n')" 0<&0`
		steal   = `"$ATTACK" __attack tiocsti-steal "$(printf 'echo pwned\n')"`
		// Readers that outlive the command, on stdin and on /dev/tty, for
		// what the user types next.
		// (An asynchronous list's stdin is /dev/null unless redirected
		// from a copy made before.)
		// The files are opened before the sandbox ends: an open that
		// makes a name after it would meet the entry gate gone (ENOSYS)
		// under native and bwrap, not the step this case shows.
		linger = `exec 4<&0
( trap '' HUP INT TERM; exec 5>stolen0; sleep 0.3; dd bs=1 count=5 >&5 ) <&4 >/dev/null 2>&1 &
( trap '' HUP INT TERM; exec 5>stolen1; sleep 0.3; dd bs=1 count=5 </dev/tty >&5 ) >/dev/null 2>&1 &
ok STARTED`
		// Everything a program can change on a terminal it holds.
		modes = `( exec 3</dev/tty ) && ok CTTY
for fd in 0 1 2; do stty raw -echo -isig rows 3 cols 7 <&$fd 2>/dev/null && ok MODES$fd; done
stty raw -echo rows 3 cols 7 </dev/tty 2>/dev/null && ok MODES_TTY
printf '\033[?1049h' >/dev/tty`
	)
	keystrokes := func(h *H, t ttyRun, o Output) {
		pty := t.pty
		h.Expect(o, "STARTED")
		if pty.Master == nil {
			h.NotApplicable("needs the terminal's master side to type into ($%s)", EnvCttyMaster)
		}
		const keys = "keys\n"
		if _, err := pty.Master.Write([]byte(keys)); err != nil {
			h.Fatalf("pty: %v", err)
		}
		time.Sleep(700 * time.Millisecond)
		n, err := pty.Pending()
		if err != nil {
			h.Fatalf("pty: %v", err)
		}
		if n != len(keys) {
			h.Errorf("of %d bytes typed after the sandbox ended, %d were read by someone else:\n%s", len(keys), len(keys)-n, o)
		}
		for _, f := range []string{"stolen0", "stolen1"} {
			if b, err := os.ReadFile(filepath.Join(t.ws, f)); err == nil && len(b) > 0 {
				h.Errorf("a process of the sandbox read %q from the terminal after it ended", b)
			}
		}
	}
	return []Case{
		ttyCase("tty-controlling-terminal", "without cordon's own pty (--no-tty): the sandbox has no controlling terminal: opening /dev/tty (keystrokes typed for the parent, ioctls on its terminal) fails",
			false, `( exec 3</dev/tty ) && ok CTTY; ( exec 3>/dev/tty ) && ok CTTY_W`,
			func(h *H, t ttyRun, o Output) { h.Refuse(o, "CTTY", "CTTY_W") }),
		ttyCase("tty-tiocsti", "without cordon's own pty: push a command into the terminal's input with TIOCSTI on stdin, stdout and stderr (cordon __attack tiocsti)",
			false, tiocsti, noInjection),
		ttyCase("tty-tiocsti-steal-ctty", "without cordon's own pty: make the terminal the controlling tty (setsid, TIOCSCTTY), then TIOCSTI",
			false, steal, noInjection),
		ttyCase("tty-keystrokes-after-exit", "without cordon's own pty: processes left behind read what the user types after the sandbox ends, from stdin and /dev/tty",
			false, linger, keystrokes),
		ttyCase("tty-interactive-tiocsti", "in cordon's interactive mode (its own pty, relayed): TIOCSTI on stdin, stdout and stderr",
			true, tiocsti, noInjection),
		ttyCase("tty-interactive-steal-ctty", "in interactive mode: setsid, TIOCSCTTY on the terminal, then TIOCSTI",
			true, steal, noInjection),
		ttyCase("tty-interactive-keystrokes-after-exit", "in interactive mode: processes left behind read what the user types after the sandbox ends, from stdin and /dev/tty",
			true, linger, keystrokes),
		ttyCase("tty-interactive-modes", "in interactive mode: change the modes and size of the terminal on stdin, stdout, stderr and /dev/tty (which opens: it is the sandbox's own); the user's terminal stays as it was",
			true, modes, func(h *H, t ttyRun, o Output) {
				h.Expect(o, "CTTY") // the sandbox does have a terminal of its own
				sameTerminal(h, t, o)
			}),
	}
}
