package conformance

import (
	"os"
	"time"
)

// EnvCtty names the controlling terminal of a process that runs cases
// through the launcher API (the mutation check gives its children one):
// the tty cases then use it, since the launcher starts the sandbox in this
// process's session.
const EnvCtty = "CORDON_CONFORMANCE_CTTY"

// Class 10: the terminal — TIOCSTI injection into the parent's tty.
func ttyCases() []Case {
	tty := func(name, summary, attack string) Case {
		return Case{Name: name, Class: 10, Summary: summary, Run: func(h *H) {
			_, p := h.ws()
			var pty *Pty
			var err error
			l := Launch{Policy: p, Dir: p.Workspace, Argv: sandboxScript(attack)}
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
			pty.Flush()
			o := h.Launch(l)
			time.Sleep(10 * time.Millisecond)
			n, err := pty.Pending()
			if err != nil {
				h.Fatalf("pty: %v", err)
			}
			if n > 0 {
				h.Errorf("%d bytes were injected into the terminal's input:\n%s", n, o)
			}
			h.Refuse(o, "TIOCSTI")
			pty.Flush()
		}}
	}
	return []Case{
		{Name: "tty-controlling-terminal", Class: 10, Summary: "the sandbox has no controlling terminal: opening /dev/tty (keystrokes typed for the parent, ioctls on its terminal) fails",
			Run: func(h *H) {
				_, p := h.ws()
				var pty *Pty
				var err error
				l := Launch{Policy: p, Dir: p.Workspace, Argv: sandboxScript(`( exec 3</dev/tty ) && ok CTTY; ( exec 3>/dev/tty ) && ok CTTY_W`)}
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
				o := h.Launch(l)
				h.Refuse(o, "CTTY", "CTTY_W")
			}},
		tty("tty-tiocsti", "push a command into the terminal's input with TIOCSTI on stdin, stdout and stderr (cordon __attack tiocsti)",
			`"$ATTACK" __attack tiocsti "$(printf 'echo pwned\n')" 0<&0`),
		tty("tty-tiocsti-steal-ctty", "make the terminal the controlling tty (setsid, TIOCSCTTY), then TIOCSTI",
			`"$ATTACK" __attack tiocsti-steal "$(printf 'echo pwned\n')"`),
	}
}
