package conformance

import "strings"

// boundaryTermCases write to the user's terminal what a terminal takes as
// a mode switched on but a naive tracker of the output would not: every
// one must be undone by what cordon sends once the sandbox has ended.
func boundaryTermCases() []Case {
	zeros := strings.Repeat("0", 40)
	return []Case{
		termEvasionCase("boundary-tty-evasions", "the user's terminal on stdout: modes switched on with parameters padded by leading zeros, after which a full reset (ESC c, which leaves tmux in the alternate screen), kitty keyboard flags set in place, insert mode and a scroll region; after the run each is switched off again",
			false, []termEvasion{
				{"\x1b[?" + zeros + "1049h", []string{"\x1b[?1049l"}},
				{"\x1b[?" + zeros + "25l", []string{"\x1b[?25h"}},
				{"\x1b[?" + zeros + "1000h", []string{"\x1b[?1000l"}},
				{"\x1b[?" + zeros + "2004h", []string{"\x1b[?2004l"}},
				{"\x1b[=5u", []string{"\x1b[=0u", "\x1b[=0;1u"}},
				// Explicitly: tmux's soft reset (CSI ! p) keeps the
				// scroll region and origin mode.
				{"\x1b[4h", []string{"\x1b[4l"}},
				{"\x1b[2;5r", []string{"\x1b[r"}},
				{"\x1b[?6h", []string{"\x1b[?6l"}},
				{"\x1b(0", []string{"\x1b(B"}},
				{"\x1b[?1047h\x1bc", []string{"\x1b[?1047l"}},
			}),
		termEvasionCase("boundary-tty-split-stdout-stderr", "the user's terminal on stdout and stderr (cordon run --no-tty, or </dev/null): a sequence begun on stdout and ended on stderr switches on the alternate screen and mouse reporting; after the run both are switched off again",
			true, []termEvasion{
				{"\x1b[?1049h", []string{"\x1b[?1049l"}},
				{"\x1b[?1000h", []string{"\x1b[?1000l"}},
			}),
	}
}

// termEvasion is what the sandbox writes (on) and what, sent after it,
// undoes it (any of off).
type termEvasion struct {
	on  string
	off []string
}

// termEvasionCase puts the user's terminal (a pty of the harness's) on
// stdout, and with split on stderr too, the sandbox writes each evasion's
// on, its last byte through stderr when split; judged on what the
// terminal received: each on that arrived whole is followed by an off;
// split, each must arrive whole (one stream, in the order written).
func termEvasionCase(name, summary string, split bool, es []termEvasion) Case {
	return Case{Name: name, Class: Boundary, Backends: linuxOnly, Summary: summary, Run: func(h *H) {
		_, p := h.ws()
		pty, err := OpenTerminal()
		if err != nil {
			h.NotApplicable("%v", err)
		}
		defer pty.Close()
		esc := func(s string) string { return strings.ReplaceAll(s, "\x1b", `\033`) }
		script := ""
		for _, e := range es {
			if split {
				script += "printf '" + esc(e.on[:len(e.on)-1]) + "'\nprintf '" + esc(e.on[len(e.on)-1:]) + "' >&2\n"
			} else {
				script += "printf '" + esc(e.on) + "'\n"
			}
		}
		script += ": > ran\n"
		// In a directory of the workspace, as boundary-tty-*-alone.
		l := Launch{Policy: p, Dir: h.Mkdir("ws/out"), Argv: []string{"/bin/sh", "-c", script}}
		l.Stdio[1] = pty.Slave
		if split {
			// Without cordon's own pty (--no-tty), which would make
			// the two one stream itself.
			l.Tty, l.Stdio[2] = pty.Slave, pty.Slave
		}
		o := h.Launch(l)
		sent := drainMaster(pty.Master)
		if !h.Exists("ws/out/ran") {
			h.Fatalf("the script did not run:\n%s", o)
		}
		for _, e := range es {
			on := strings.LastIndex(sent, e.on)
			if on < 0 {
				if split {
					// Two streams copied apart: what the terminal got is
					// not what the sandbox wrote, nor what one tracker
					// of it saw.
					h.Errorf("the user's terminal got the sandbox's stdout and stderr out of the order written (no %q):\n%q\n%s", e.on, sent, o)
				}
				continue
			}
			undone := false
			for _, off := range e.off {
				undone = undone || strings.Contains(sent[on+len(e.on):], off)
			}
			if !undone {
				h.Errorf("the user's terminal was left with %q on (nothing sent any of %q after it):\n%q\n%s", e.on, e.off, sent, o)
			}
		}
		pty.Flush()
	}}
}
