package conformance

import (
	"os/exec"
	"strings"
	"time"
)

// seatbeltOnly marks cases about how Seatbelt matches paths: it compares
// the resolved path string, so spellings the kernel folds together are
// where a profile that forgot one would leak.
var seatbeltOnly = []string{"seatbelt"}

// otherSpelling returns the same macOS path through or without the
// /private firmlink (/tmp, /var and /etc are links into /private).
func otherSpelling(p string) (string, bool) {
	for _, top := range []string{"/tmp/", "/var/", "/etc/"} {
		if strings.HasPrefix(p, "/private"+top) {
			return strings.TrimPrefix(p, "/private"), true
		}
		if strings.HasPrefix(p, top) {
			return "/private" + p, true
		}
	}
	return "", false
}

// seatbeltCases are escape attempts that only make sense against Seatbelt.
func seatbeltCases() []Case {
	return []Case{
		{Name: "firmlink-spellings", Class: 2, Backends: seatbeltOnly,
			Summary: "read and write a denied file through the other spelling of the /private firmlink",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("outside/secret", h.Secret)
				alt, ok := otherSpelling(t)
				if !ok {
					h.NotApplicable("fixture %s is not under /tmp, /var or /etc", t)
				}
				p.Deny = []string{alt} // the policy names one spelling...
				o := h.Sandbox(p, `cat "$A" "$B"; echo pwn >> "$A" && ok WRITE_A; echo pwn >> "$B" && ok WRITE_B`, "A="+t, "B="+alt)
				h.NoSecret(o) // ...both are denied
				h.Refuse(o, "WRITE_A", "WRITE_B")
				h.Want("outside/secret", h.Secret)
			}},
		{Name: "firmlink-readonly-dir", Class: 1, Backends: seatbeltOnly,
			Summary: "create files in a read-only directory through the other spelling of the /private firmlink",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("ws/ro")
				alt, ok := otherSpelling(d)
				if !ok {
					h.NotApplicable("fixture %s is not under /tmp, /var or /etc", d)
				}
				p.Readonly = []string{d}
				o := h.Sandbox(p, `echo x > "$A/new" && ok CREATE_A; echo x > "$B/new2" && ok CREATE_B`, "A="+d, "B="+alt)
				h.Refuse(o, "CREATE_A", "CREATE_B")
				h.Absent("ws/ro/new")
				h.Absent("ws/ro/new2")
			}},
		{Name: "launchd-escape", Class: 7, Backends: seatbeltOnly,
			Summary: "start a process outside the sandbox through launchd, LaunchServices or an Apple Event, and have it write outside",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("outside")
				label := "org.cordon.escape." + h.Secret[len(h.Secret)-12:]
				h.Cleanup(func() { exec.Command("/bin/launchctl", "remove", label).Run() })
				o := h.Sandbox(p, launchdAttempts, "O="+h.Path("outside"), "L="+label)
				h.Refuse(o, "SUBMIT", "OPEN", "APPLEEVENT")
				// Whatever got through would run a moment later, outside.
				for range 30 {
					if h.Exists("outside/by-launchd") || h.Exists("outside/by-open") || h.Exists("outside/by-appleevent") {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				h.Absent("outside/by-launchd")
				h.Absent("outside/by-open")
				h.Absent("outside/by-appleevent")
			}},
	}
}

// launchdAttempts asks three system services to run a command for the
// sandbox: launchd (a submitted job), LaunchServices (open runs a .command
// file in Terminal) and Terminal through an Apple Event. Each would run
// outside any profile.
const launchdAttempts = `printf '#!/bin/sh\ntouch "%s/by-open"\n' "$O" > "$TMPDIR/x.command"
chmod +x "$TMPDIR/x.command"
/bin/launchctl submit -l "$L" -- /usr/bin/touch "$O/by-launchd" && ok SUBMIT
/usr/bin/open "$TMPDIR/x.command" && ok OPEN
/usr/bin/osascript -e "tell application \"Terminal\" to do script \"touch $O/by-appleevent\"" && ok APPLEEVENT
true`
