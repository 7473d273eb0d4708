package conformance

import "strings"

// Class 16: what a sandbox names reaches the user's terminal through
// cordon's own messages. Judged by what 'cordon run' itself printed.

func boundaryNameCases() []Case {
	return []Case{
		{Name: "boundary-names-in-notes", Class: Boundary,
			Summary: "directories made inside a sandbox, with terminal escape sequences in their names (a title, the alternate screen, an OSC 52 clipboard write, a C1 CSI) and holding a .git link or a .git file, are named by the notes of the next launch: cordon prints them escaped, no ESC, BEL or C1 byte",
			Run: func(h *H) {
				if h.x.Name() != "cordon run" {
					h.NotApplicable("judged by what a 'cordon run' process prints; the %s executor prints no notes", h.x.Name())
				}
				_, p := h.ws()
				h.Mkdir("ws/src")
				h.Sandbox(p, `cd src; d=$(printf 'n1\033]0;TITLE\007\033[?1049h'); mkdir -p "$d" && ln -s /nonexistent "$d/.git" &&
d2=$(printf 'n2\033]52;c;ZWNobyBwd25lZAo=\007\302\233?1049h'); mkdir -p "$d2" && printf 'gitdir: /tmp/x\033]0;T2\007\n' > "$d2/.git" && ok PLANTED`)
				o := h.Sandbox(p, `ok WORK`)
				h.Expect(o, "WORK")
				if !strings.Contains(o.Stderr, `\x1b]52;c;`) {
					h.Errorf("stderr does not name the planted directories, escaped:\n%q", clip(o.Stderr))
				}
				for _, b := range []string{"\x1b", "\x07", "\u009b", "\x9b"} {
					if strings.Contains(o.Stderr, b) {
						h.Errorf("host: cordon printed the control byte %q of a planted name on stderr:\n%q", b, clip(o.Stderr))
					}
				}
			}},
	}
}
