package conformance

import (
	"os"
	"path/filepath"
	"time"
)

// privateTmpCases are the work and attacks on /tmp where the backend
// mounts the private TMPDIR there (policy.Canonical.WithTmp). Landlock
// shows the host's /tmp (docs/threat-model.md, its limits).
func privateTmpCases() []Case {
	return []Case{
		{Name: "work-private-tmp", Class: Work, Backends: []string{"native", "bwrap"},
			Summary: "/tmp is the launch's own: echo > /tmp/build.log, mktemp -p /tmp, TMPDIR=/tmp, a file made, reopened, renamed and removed; a host file in /tmp is out of sight and unchanged, nothing lands in the host's /tmp, the workspace keeps its path",
			Run: func(h *H) {
				_, p := h.ws()
				host, err := os.CreateTemp("/tmp", "cordon-conf-host-")
				if err != nil {
					h.Errorf("host: make a file in /tmp: %v", err)
					return
				}
				name := filepath.Base(host.Name())
				host.WriteString("host\n")
				host.Close()
				h.Cleanup(func() { os.Remove(host.Name()) })
				old := time.Now().Add(-time.Hour).Truncate(time.Second)
				os.Chtimes(host.Name(), old, old)
				mark := "cordon-conf-mark-" + name
				o := h.Sandbox(p, `echo x > /tmp/build.log && ok ECHO; f=$(mktemp -p /tmp) && ok MKTEMP && rm "$f"; TMPDIR=/tmp sh -c 'd=$(mktemp -d) && echo y > "$d/o" && rm -r "$d"' && ok TMPDIR_TMP; echo a > /tmp/x && echo b >> /tmp/x && [ "$(cat /tmp/x)" = "a
b" ] && mv /tmp/x /tmp/`+mark+` && rm /tmp/`+mark+` && ok CYCLE; [ -e /tmp/`+name+` ] || ok HOST_HIDDEN; echo planted > /tmp/`+name+` && ok PLANT_PRIVATE; echo w > ws-made && ok WS; echo left > /tmp/`+mark+`.left`)
				h.Expect(o, "ECHO", "MKTEMP", "TMPDIR_TMP", "CYCLE", "HOST_HIDDEN", "PLANT_PRIVATE", "WS")
				h.Want("ws/ws-made", "w\n")
				b, err := os.ReadFile(host.Name())
				if st, serr := os.Stat(host.Name()); err != nil || serr != nil || string(b) != "host\n" || !st.ModTime().Equal(old) {
					h.Errorf("host: %s changed (content %q, %v, %v)", host.Name(), b, err, serr)
				}
				for _, n := range []string{mark, mark + ".left"} {
					if _, err := os.Lstat(filepath.Join("/tmp", n)); err == nil {
						h.Errorf("host: the sandbox's /tmp/%s is in the host's /tmp", n)
					}
				}
			}},
	}
}
