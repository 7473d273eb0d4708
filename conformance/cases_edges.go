package conformance

import (
	"encoding/json"
	"os"
	"strings"
)

// Cases at the edges of the five-field policy (issue 44): a protected name
// through a symbolic link the sandbox may write, a writable file that does
// not exist yet, a denied path behind a directory closed to the user, the
// answer of a refused socket.

// linkSwapRefusal is part of the error with which the policy refuses a
// denied or read-only root through a link the sandbox may write.
const linkSwapRefusal = "a link inside a writable root can be swapped"

// refusedWith fails unless cordon refused the launch (exit 125) with msg.
func (h *H) refusedWith(o Output, msg string) {
	if o.Code != 125 || !strings.Contains(o.Stderr, msg) {
		h.Errorf("cordon did not refuse the launch with %q:\n%s", msg, o)
	}
}

// policyFile writes the five fields to rel as a policy file.
func (h *H) policyFile(rel string, denied, readonly, writable []string) string {
	if denied == nil {
		denied = []string{}
	}
	if readonly == nil {
		readonly = []string{}
	}
	b, err := json.Marshal(map[string]any{"baseWritableRoots": []string{}, "deniedRoots": denied,
		"readonlyRoots": readonly, "writableRoots": writable, "restrictWrites": true})
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return h.Write(rel, string(b))
}

func edgeCases() []Case {
	return []Case{
		{Name: "symlink-ancestor-protected", Class: Symlink, Backends: linuxOnly,
			Summary: "a read-only or denied root named through a link in a writable root (R/link/secret with R/link -> decoy, and R/alias -> decoy/secret itself), by flag and by policy file: the launch is refused, so the link cannot be swapped for a directory holding the sandbox's secret; named by its real path the launch runs",
			Run: func(h *H) {
				r := h.Mkdir("R")
				h.Write("R/decoy/secret", "original\n")
				h.Symlink("decoy", "R/link")
				h.Symlink("decoy/secret", "R/alias")
				swap := `rm link && mkdir link && echo evil > link/secret && ok SWAP_DIR; rm -f alias && echo evil > alias && ok SWAP_FILE`
				file := h.policyFile("policy.json", nil, []string{r + "/link/secret"}, []string{r})
				for _, p := range []Policy{
					{Restrict: true, Writable: []string{r}, Readonly: []string{r + "/link/secret"}},
					{Restrict: true, Writable: []string{r}, Deny: []string{r + "/link/secret"}},
					{Restrict: true, Writable: []string{r}, Readonly: []string{r + "/alias"}},
					{Restrict: true, Writable: []string{r}, Deny: []string{r + "/alias"}},
					{File: file},
				} {
					l := h.Script(p, swap)
					l.Dir, l.Refusable = r, linkSwapRefusal
					o := h.Launch(l)
					h.refusedWith(o, linkSwapRefusal)
					h.Refuse(o, "SWAP_DIR", "SWAP_FILE")
					h.Want("R/link/secret", "original\n")
					h.Want("R/alias", "original\n")
				}
				// The ordinary work beside it: the real path named, the
				// launch runs, the file stays read-only, the rest of R is
				// writable (in a directory of its own: the landlock
				// backend freezes the entries of R itself, which holds
				// a protected root).
				h.Mkdir("R/src")
				l := h.Script(Policy{Restrict: true, Writable: []string{r}, Readonly: []string{r + "/decoy/secret"}},
					`echo pwn > decoy/secret && ok WRITE; echo work > src/out && ok WORK`)
				l.Dir = r
				o := h.Launch(l)
				h.Expect(o, "WORK")
				h.Refuse(o, "WRITE")
				h.Want("R/src/out", "work\n")
				h.Want("R/decoy/secret", "original\n")
			}},
		{Name: "notyet-writable-file", Class: NotYet, Backends: linuxOnly,
			Summary: "--writable R/out.log and --writable R/cache/ that do not exist yet, R itself not writable: exactly out.log is created as a file (written, appended), cache as a directory, and nothing beside them",
			Run: func(h *H) {
				r := h.Mkdir("R")
				l := h.Script(Policy{Restrict: true, Writable: []string{r + "/out.log", r + "/cache/"}},
					`echo one > out.log && ok WRITE; echo two >> out.log && ok APPEND
mkdir -p cache/go && echo c > cache/go/f && ok CACHE
echo x > sib && ok SIB; mkdir dir && ok MKDIR; echo x > out.log2 && ok NEAR; ln -s out.log l && ok LINK`)
				l.Dir = r
				o := h.Launch(l)
				h.Refuse(o, "SIB", "MKDIR", "NEAR", "LINK")
				for _, rel := range []string{"R/sib", "R/dir", "R/out.log2", "R/l"} {
					h.Absent(rel)
				}
				// Under landlock, Landlock grants by existing inode: the
				// entry gate makes the one name in a directory the sandbox
				// may not write (gate).
				h.Expect(o, "WRITE", "APPEND", "CACHE")
				h.Want("R/out.log", "one\ntwo\n")
				h.Want("R/cache/go/f", "c\n")
				if fi, err := os.Lstat(h.Path("R/out.log")); err != nil || !fi.Mode().IsRegular() {
					h.Errorf("host: R/out.log is not a regular file: %v", err)
				}
			}},
		{Name: "closed-dir-deny-unreachable", Class: Direct, Backends: linuxOnly,
			Summary: "a denied file below another user's directory closed to the case's user (0700, root's), outside every writable root: the launch runs (with a note for that user), the file stays unread, the work beside it is done",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("closed")
				h.Write("closed/secret", h.Secret)
				h.KeepOwner("closed")
				h.KeepOwner("closed/secret")
				if err := os.Chmod(d, 0o700); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				p.Deny = []string{d + "/secret"}
				h.Mkdir("ws/src")
				o := h.Sandbox(p, `cat "$FIX/closed/secret"; echo work > src/out && ok WORK`)
				h.Expect(o, "WORK")
				h.NoSecret(o)
				h.Want("ws/src/out", "work\n")
				if !h.User.Invoker && !strings.Contains(o.Stderr, "not looked up") {
					h.Errorf("no note says the denied root was not looked up:\n%s", o)
				}
			}},
		{Name: "closed-dir-deny-reachable", Class: Direct, Backends: linuxOnly,
			Summary: "a denied file below a directory of the user's own, closed (0000), inside the workspace: the sandbox could open it again (chmod), so for that user the launch is refused, saying why; as root the deny holds",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("ws/closed")
				h.Write("ws/closed/secret", h.Secret)
				if err := os.Chmod(d, 0); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				h.Cleanup(func() { os.Chmod(d, 0o755) })
				p.Deny = []string{d + "/secret"}
				h.Mkdir("ws/src")
				l := h.Script(p, `chmod 700 closed; cat closed/secret; echo work > src/out && ok WORK`)
				l.Refusable = "the sandbox could reach it"
				o := h.Launch(l)
				h.NoSecret(o)
				if h.User.root() {
					// Root reads through the closed mode: nothing to
					// refuse, and the deny holds.
					h.Expect(o, "WORK")
					h.Want("ws/src/out", "work\n")
				} else {
					h.refusedWith(o, "chmod u+rx "+d)
					h.Absent("ws/src/out")
				}
			}},
		{Name: "net-unix-refused-eacces", Class: Kernel, Backends: linuxOnly,
			Summary: "with the network off, connect to a host process's Unix socket: refused with EACCES (not EAFNOSUPPORT, which reads as 'no Unix sockets'), the listener sees nothing; socketpair works",
			Run: func(h *H) {
				h.Mkdir("outside")
				sock := h.Path("outside/agent.sock")
				got := h.Listen(sock)
				if err := os.Chmod(sock, 0o777); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				o := h.Sandbox(Policy{Restrict: true}, `"$ATTACK" __attack unix-errno "$S"`, "S="+sock)
				h.Refuse(o, "CONNECTED")
				h.Expect(o, "ERRNO_EACCES", "PAIR")
				if n := got(); n > 0 {
					h.Errorf("the host socket accepted %d connection(s) from inside the sandbox", n)
				}
			}},
	}
}
