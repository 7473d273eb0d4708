package conformance

import (
	"os"
	"strings"
	"sync"
	"time"
)

// answerCases: what the sandbox asked the terminal is never answered into
// the user's shell after cordon returns, and the sandbox never has the
// clipboard read for it (OSC 52); with cordon's own pty and with --no-tty.
// The user's terminal is a pty of the case's, scripted as a terminal that
// answers late: the lateness a real one shows only after drawing ~90 KB of
// ESC # 8 (or over ssh) is forced here, not timed.
func answerCases() []Case {
	return []Case{
		answersCase("tty-answers-late", true),
		answersCase("tty-answers-late-no-tty", false),
	}
}

// The sandbox fills the screen, asks the four queries a terminal answers
// on its input (DA1, DA2, the cursor's position, the status) and the
// clipboard (OSC 52), and exits.
const askTerminal = `s=''; i=0
while [ $i -lt 1000 ]; do s="$s"'\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8\033#8'; i=$((i+1)); done
printf "$s"
printf '\033[c\033[>c\033[6n\033[5n'
printf '\033]52;c;?\007'
printf '\033[1mWORK-OUTPUT\033[0m'
: > ran
`

// sandboxQueries is how many of askTerminal's queries a terminal answers
// on its input (the clipboard's aside).
const sandboxQueries = 4

// clipboardSecret is what the scripted terminal's clipboard holds
// (base64, as OSC 52 answers).
const clipboardSecret = "U0VDUkVULUNMSVA="

// endMark is written by the case on the user's terminal once cordon has
// returned: when the scripted terminal reads it, it has read everything
// cordon wrote before. endKeys is what the user then types.
const (
	endMark = "\x1b_cordon-case-end\x1b\\"
	endKeys = "END\n"
)

// lateTerminal plays the user's terminal on a pty's master side. Late, it
// holds its answers to the sandbox's queries until it is asked something
// more after them (cordon's own query at the end) or cordon has returned
// (endMark), as a terminal still drawing the sandbox's output does; then
// it answers all, in order. Otherwise it answers each query at once. An
// OSC 52 query it answers at once with clipboardSecret, as tmux with
// set-clipboard on does. Once it has read endMark it types endKeys.
type lateTerminal struct {
	late bool

	mu        sync.Mutex
	seen      []byte // everything read from the master
	queries   int    // queries answered on the input, counted
	owed      []string
	clipboard bool // an OSC 52 query reached the terminal
	typed     chan struct{}
}

func newLateTerminal(late bool) *lateTerminal {
	return &lateTerminal{late: late, typed: make(chan struct{})}
}

// run reads the master until the slave is closed everywhere (EIO).
func (lt *lateTerminal) run(p *Pty) {
	buf := make([]byte, 32<<10)
	var rest string // a query begun, not yet whole
	for {
		n, err := p.Master.Read(buf)
		if n > 0 {
			lt.mu.Lock()
			lt.seen = append(lt.seen, buf[:n]...)
			rest = lt.answer(p, rest+string(buf[:n]))
			lt.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// answer takes s, what the terminal read, and answers the whole queries
// in it; it returns the tail that may begin one.
func (lt *lateTerminal) answer(p *Pty, s string) string {
	answers := []struct{ query, answer string }{
		{"\x1b[c", "\x1b[?62;22c"},
		{"\x1b[>c", "\x1b[>84;0;0c"},
		{"\x1b[6n", "\x1b[1;2R"},
		{"\x1b[5n", "\x1b[0n"},
	}
	for {
		i := strings.IndexByte(s, 0x1b)
		if i < 0 {
			return ""
		}
		s = s[i:]
		if len(s) < len(endMark) && strings.HasPrefix(endMark, s) || s == "\x1b]" || s == "\x1b[" || s == "\x1b[>" || s == "\x1b]5" || s == "\x1b]52" {
			return s
		}
		switch {
		case strings.HasPrefix(s, endMark):
			lt.pay(p)
			p.Master.Write([]byte(endKeys))
			close(lt.typed)
			s = s[len(endMark):]
			continue
		case strings.HasPrefix(s, "\x1b]52;"):
			lt.clipboard = true
			p.Master.Write([]byte("\x1b]52;c;" + clipboardSecret + "\x07"))
			s = s[5:]
			continue
		}
		found := false
		for _, a := range answers {
			if strings.HasPrefix(s, a.query) {
				lt.queries++
				lt.owed = append(lt.owed, a.answer)
				if !lt.late || lt.queries > sandboxQueries {
					lt.pay(p)
				}
				s, found = s[len(a.query):], true
				break
			}
		}
		if !found {
			s = s[1:]
		}
	}
}

// pay writes every answer owed, in the order asked.
func (lt *lateTerminal) pay(p *Pty) {
	p.Master.Write([]byte(strings.Join(lt.owed, "")))
	lt.owed = nil
}

// answersCase: the sandbox (askTerminal) on the user's terminal (a pty of
// the case's on stdin, stdout and stderr, the launching process's
// controlling terminal), in cordon's interactive mode or with --no-tty;
// the terminal answers late. Judged on the user's terminal once cordon
// has returned: the line the user's shell reads next is what the user
// typed, no clipboard query reached the terminal, the sandbox's ordinary
// output did. The work beside it, with a pty: a program inside asks for
// the cursor's position and the device attributes and reads the answers
// while it runs.
func answersCase(name string, interactive bool) Case {
	mode := "with cordon's own pty"
	if !interactive {
		mode = "without cordon's own pty (--no-tty)"
	}
	summary := mode + ": the sandbox fills the user's terminal with ESC # 8, asks it for DA1, DA2, the cursor's position and the status and for the clipboard (OSC 52), and exits; the terminal answers late (after cordon's own query, or after cordon returned); the user's shell then reads only what the user typed, no clipboard query reached the terminal, the sandbox's output did"
	if interactive {
		summary += "; the work: a program inside reads the answers to its own cursor and DA1 queries while it runs"
	}
	return Case{Name: name, Class: TTY, Summary: summary, Run: func(h *H) {
		if interactive && h.x.Name() == "launcher" {
			h.NotApplicable("in interactive mode the launcher API starts the sandbox in this process's session, whose terminal is not the case's own")
		}
		r, o := answersLaunch(h, interactive, askTerminal, true)
		if !h.Exists("ws/out/ran") {
			h.Fatalf("the script did not run:\n%s", o)
		}
		if r.line != endKeys {
			h.Errorf("the user's shell read %q after cordon returned, not only what the user typed (%q):\n%s", r.line, endKeys, o)
		}
		if r.clipboard {
			h.Errorf("the sandbox's OSC 52 clipboard query reached the user's terminal:\n%s", o)
		}
		if !strings.Contains(r.seen, "\x1b[1mWORK-OUTPUT\x1b[0m") {
			h.Errorf("the sandbox's output did not reach the user's terminal whole:\n%s", o)
		}
		if !interactive {
			return
		}
		const own = `stty raw -echo
printf '\033[6n'; dd bs=1 count=6 of=cpr 2>/dev/null
printf '\033[c'; dd bs=1 count=9 of=da 2>/dev/null
: > ran
`
		r, o = answersLaunch(h, interactive, own, false)
		if got, _ := h.Read("ws/out/cpr"); got != "\x1b[1;2R" {
			h.Errorf("the program's cursor position query was answered %q, not %q:\n%s", got, "\x1b[1;2R", o)
		}
		if got, _ := h.Read("ws/out/da"); got != "\x1b[?62;22c" {
			h.Errorf("the program's DA1 query was answered %q, not %q:\n%s", got, "\x1b[?62;22c", o)
		}
		if r.line != endKeys {
			h.Errorf("after a program's own queries the user's shell read %q, not only %q:\n%s", r.line, endKeys, o)
		}
	}}
}

// answersLaunch runs script on a new user's terminal answered by a
// lateTerminal (late or prompt), then marks the end and types endKeys;
// it returns what the terminal saw and the line the user's shell reads
// next, and the launch's output. Every wait is bounded: a terminal that
// never answers fails the case, it does not hang it.
func answersLaunch(h *H, interactive bool, script string, late bool) (answered, Output) {
	_, p := h.ws()
	pty, err := OpenTerminal()
	if err != nil {
		h.NotApplicable("%v", err)
	}
	defer pty.Close()
	lt := newLateTerminal(late)
	ended := make(chan struct{})
	go func() { defer close(ended); lt.run(pty) }()
	// The master's read ends (EIO) once no slave is open: closed first.
	defer func() {
		pty.Slave.Close()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
		}
	}()
	// In a directory of the workspace, as boundary-tty-*-alone.
	l := Launch{Policy: p, Dir: h.Mkdir("ws/out"), Argv: []string{"/bin/sh", "-c", script}, Interactive: interactive}
	l.Stdio = [3]*os.File{pty.Slave, pty.Slave, pty.Slave}
	if !interactive {
		l.Tty = pty.Slave // cordon run --no-tty
	}
	o := h.Launch(l)
	if _, err := pty.Slave.Write([]byte(endMark)); err != nil {
		h.Fatalf("pty: %v", err)
	}
	end := time.Now().Add(20 * time.Second)
	select {
	case <-lt.typed:
	case <-time.After(time.Until(end)):
		h.Fatalf("the scripted terminal never read the case's end mark:\n%s", o)
	}
	line, err := pty.ReadLine(end)
	if err != nil {
		h.Fatalf("the user's terminal: %v\n%s", err, o)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return answered{seen: string(lt.seen), clipboard: lt.clipboard, line: line}, o
}

// answered is what a lateTerminal saw of a launch.
type answered struct {
	seen      string // what reached the terminal
	clipboard bool   // an OSC 52 query among it
	line      string // the line the user's shell read next
}
