package conformance

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/landlock"
)

// privateTmpCases are the work and attacks on /tmp (docs/design.md,
// "/tmp"): native and bwrap mount the workspace's private TMPDIR there
// (policy.Canonical.WithTmp), so the host's /tmp is out of sight; under
// landlock no mount can be made, and the entry gate lets the sandbox make
// entries in the host's /tmp and reach only those, removed when it ends,
// while the host's stay readable as the model says and never change
// (policy.Canonical.GatedTmp). Both are judged by the host's /tmp.
func privateTmpCases() []Case {
	return []Case{
		{Name: "work-private-tmp", Class: Work, Backends: linuxOnly,
			Summary: "/tmp is the sandbox's own: echo > /tmp/build.log, mktemp -p /tmp, mktemp -d, TMPDIR=/tmp, a file made, reopened, chmodded, renamed and removed; a host file in /tmp is unchanged (out of sight on native and bwrap), nothing lands in the host's /tmp, another workspace's sandbox sees nothing of it, the workspace keeps its path",
			Run: func(h *H) {
				_, p := h.ws()
				env := h.gatedTmpEnv(p)
				host := h.hostTmpFile()
				name := filepath.Base(host)
				mark := "cordon-conf-mark-" + name
				o := h.Sandbox(p, `echo x > /tmp/build.log && [ "$(cat /tmp/build.log)" = x ] && ok ECHO; f=$(mktemp -p /tmp) && echo m > "$f" && [ "$(cat "$f")" = m ] && chmod 700 "$f" && rm "$f" && ok MKTEMP; d=$(mktemp -d -p /tmp) && mkdir "$d/sub" && echo s > "$d/sub/f" && mv "$d" /tmp/`+mark+`.d && [ "$(cat /tmp/`+mark+`.d/sub/f)" = s ] && rm -r /tmp/`+mark+`.d && ok MKTEMP_D; TMPDIR=/tmp sh -c 'd=$(mktemp -d) && echo y > "$d/o" && rm -r "$d"' && ok TMPDIR_TMP; echo a > /tmp/`+mark+`.x && echo b >> /tmp/`+mark+`.x && [ "$(cat /tmp/`+mark+`.x)" = "a
b" ] && mv /tmp/`+mark+`.x /tmp/`+mark+` && rm /tmp/`+mark+` && ok CYCLE
if [ -e /tmp/`+name+` ]; then ok HOST_SEEN; fi
echo planted > /tmp/`+name+` && ok PLANTED; chmod 600 /tmp/`+name+` && ok CHMOD_HOST; mv /tmp/`+name+` /tmp/`+mark+`.moved && ok MOVED_HOST
echo w > ws-made && ok WS; echo left > /tmp/`+mark+`.left; mkdir -p /tmp/`+mark+`.dir/a && echo left > /tmp/`+mark+`.dir/a/f`, env...)
				h.Expect(o, "ECHO", "MKTEMP", "MKTEMP_D", "TMPDIR_TMP", "CYCLE", "WS")
				if h.Backend() == "landlock" {
					// The host's /tmp, as the model reads it: seen, and
					// never changed.
					h.Expect(o, "HOST_SEEN")
					h.Refuse(o, "PLANTED", "CHMOD_HOST", "MOVED_HOST")
				} else {
					// The private /tmp: the name is free there.
					h.Refuse(o, "HOST_SEEN")
					h.Expect(o, "PLANTED")
				}
				h.Want("ws/ws-made", "w\n")
				h.hostTmpKept(host)
				h.hostTmpFree(mark, mark+".x", mark+".left", mark+".dir", mark+".d", mark+".moved")
				// Another workspace's sandbox finds nothing the first left
				// in its /tmp (native and bwrap keep it in the first
				// workspace's TMPDIR; landlock removed it).
				w2 := h.Mkdir("ws2")
				o = h.Sandbox(Policy{Workspace: w2}, `[ -e /tmp/`+mark+`.left ] || [ -e /tmp/`+mark+`.dir ] || ok OTHER_CLEAN; echo t > /tmp/`+mark+`.left && rm /tmp/`+mark+`.left && ok OTHER_WORKS`, env...)
				h.Expect(o, "OTHER_CLEAN", "OTHER_WORKS")
				h.hostTmpFree(mark + ".left")
			}},
		{Name: "work-private-tmp-socket", Class: Work, Backends: linuxOnly, Needs: []string{"python3"},
			Summary: "a server and client on a Unix socket under /tmp work; a host process's socket in /tmp is refused and its listener sees nothing; nothing is left in the host's /tmp",
			Run: func(h *H) {
				_, p := h.ws()
				hostFile := h.hostTmpFile()
				mark := "cordon-conf-sock-" + filepath.Base(hostFile)
				hostSock := filepath.Join("/tmp", mark+".host")
				accepted := h.Listen(hostSock)
				h.Cleanup(func() { os.Remove(hostSock) })
				// Its mode lets any user connect: a refusal is the sandbox's.
				os.Chmod(hostSock, 0o777)
				h.Write("ws/tmpsock.py", `import socket, sys
path = "/tmp/`+mark+`.own"
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen()
c = socket.socket(socket.AF_UNIX); c.connect(path); a, _ = s.accept()
c.sendall(b"hi")
if a.recv(2) == b"hi":
    print("@@OWN@@")
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print("@@HOST@@")
except OSError:
    pass
`)
				o := h.Sandbox(p, `python3 tmpsock.py "$S"`, append(h.gatedTmpEnv(p), "S="+hostSock)...)
				h.Expect(o, "OWN")
				h.Refuse(o, "HOST")
				if n := accepted(); n > 0 {
					h.Errorf("host: its socket in /tmp accepted %d connection(s) from inside the sandbox:\n%s", n, o)
				}
				h.hostTmpFree(mark + ".own")
			}},
	}
}

// gatedTmpEnv is the environment that lets the landlock backend gate
// /tmp in a case: the fixture's HOME is below /tmp, and the credential
// stores the workspace preset denies there would split /tmp into a rule
// per entry, where the gate does not open it (policy.Canonical.GatedTmp,
// launcher's readsNew). The user's own home, as a real user has it.
// Another denied root below /tmp (a state directory cordon once kept in
// /tmp/cordon-<uid> for this user) splits it all the same: then the
// backend keeps /tmp read-only, as the model reads it, and the case has
// nothing to judge.
func (h *H) gatedTmpEnv(p Policy) []string {
	if h.Backend() != "landlock" {
		return nil
	}
	home := h.realHome()
	if strings.HasPrefix(home, "/tmp/") {
		h.NotApplicable("%s's home %s is below /tmp, which its denied credential stores split", h.User.Name, home)
	}
	if old := filepath.Join("/tmp", "cordon-"+strconv.Itoa(h.User.Uid)); dirExists(old) {
		// The launcher denies it for that user (state.Places); the plan
		// taken here is this process's user's.
		h.NotApplicable("%s's old state directory %s, denied below /tmp, splits it: the landlock backend keeps /tmp read-only", h.User.Name, old)
	}
	env := []string{"HOME=" + home}
	pl := h.Plan(p, env...)
	if n := "/tmp/\x00"; !pl.Allows(n, landlock.OpRead) || !pl.Allows(n, landlock.OpList) {
		h.NotApplicable("a denied root below /tmp splits it for %s (%s): the landlock backend keeps /tmp read-only", h.User.Name, strings.Join(pl.Explain("/tmp"), "; "))
	}
	return env
}

// hostTmpFile makes a host file in /tmp that any user may write and
// read, dated hostTmpTime, removed when the case ends: what the sandbox
// must leave as it is.
func (h *H) hostTmpFile() string {
	f, err := os.CreateTemp("/tmp", "cordon-conf-host-")
	if err != nil {
		h.Fatalf("host: make a file in /tmp: %v", err)
	}
	f.WriteString("host\n")
	f.Close()
	h.Cleanup(func() { os.Remove(f.Name()) })
	os.Chmod(f.Name(), 0o666)
	os.Chtimes(f.Name(), hostTmpTime, hostTmpTime)
	return f.Name()
}

var hostTmpTime = time.Unix(1e9, 0)

// hostTmpKept fails the case unless the host file hostTmpFile made is as
// it made it.
func (h *H) hostTmpKept(p string) {
	b, err := os.ReadFile(p)
	st, serr := os.Stat(p)
	if err != nil || serr != nil || string(b) != "host\n" || st.Mode().Perm() != 0o666 || !st.ModTime().Equal(hostTmpTime) {
		h.Errorf("host: %s changed (content %q, %v, %v)", p, b, err, serr)
	}
}

// hostTmpFree fails the case if any of the names is in the host's /tmp.
func (h *H) hostTmpFree(names ...string) {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join("/tmp", n)); err == nil {
			h.Errorf("host: the sandbox's /tmp/%s is in the host's /tmp", n)
			os.RemoveAll(filepath.Join("/tmp", n))
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
