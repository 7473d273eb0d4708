package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Ordinary work that makes, removes and renames names where the landlock
// backend's plan freezes a directory (the workspace's top, a directory
// above a carve-out): its entry gate makes them (docs/design.md, "The
// entry gate"). On the other backends the same work is plain.
func gateWorkCases() []Case {
	return []Case{
		{Name: "work-top-entries", Class: Work, Summary: "touch, mkdir, mv, rm, sed -i, ln -s, truncate and chmod at the workspace's top and in a directory above a read-only carve-out; the host shows exactly that, the carve-out unchanged",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/gone.txt", "bye\n")
				h.Write("ws/sub/old", "old\n")
				ro := h.Write("ws/sub/ro.txt", "keep\n")
				p.Readonly = []string{ro}
				o := h.Sandbox(p, `touch NEW.md && ok TOUCH; mkdir build && echo b > build/out && ok MKDIR_FILL; mkdir -p build/x/y && ok MKDIR_P
echo one > a.txt && echo two >> a.txt && ok WRITE_APPEND; mv a.txt moved.txt && ok MV; sed -i s/one/uno/ moved.txt && ok SED_I
ln -s moved.txt link && ok SYMLINK; rm gone.txt && ok RM; printf abcdef > t.txt && truncate -s 3 t.txt && ok TRUNCATE; chmod 600 moved.txt && ok CHMOD
echo again > NEW.md && ok REOPEN; mv build out && ok MV_DIR; rm -r out/x && ok RM_R
(cd sub && touch new && mv new renamed && echo s > renamed && ok SUB_WORK && rm old && ok SUB_RM)
echo x > sub/ro.txt 2>/dev/null && ok WROTE_RO; mv sub/ro.txt sub/moved 2>/dev/null && ok MOVED_RO; rm -f sub/ro.txt 2>/dev/null; mv sub elsewhere 2>/dev/null && ok MOVED_SUB; true`)
				h.Expect(o, "TOUCH", "MKDIR_FILL", "MKDIR_P", "WRITE_APPEND", "MV", "SED_I", "SYMLINK", "RM", "TRUNCATE", "CHMOD",
					"REOPEN", "MV_DIR", "RM_R", "SUB_WORK", "SUB_RM")
				h.Refuse(o, "WROTE_RO", "MOVED_RO", "MOVED_SUB")
				h.Want("ws/NEW.md", "again\n")
				h.Want("ws/out/out", "b\n")
				h.Absent("ws/out/x")
				h.Absent("ws/build")
				h.Want("ws/moved.txt", "uno\ntwo\n")
				h.Absent("ws/a.txt")
				h.Absent("ws/gone.txt")
				h.Want("ws/t.txt", "abc")
				if t, err := os.Readlink(h.Path("ws/link")); err != nil || t != "moved.txt" {
					h.Errorf("host: ws/link is not a link to moved.txt: %q, %v", t, err)
				}
				if fi, err := os.Stat(h.Path("ws/moved.txt")); err != nil || fi.Mode().Perm() != 0o600 {
					h.Errorf("host: ws/moved.txt is not mode 0600: %v", err)
				}
				h.Want("ws/sub/renamed", "s\n")
				h.Absent("ws/sub/old")
				h.Want("ws/sub/ro.txt", "keep\n")
				h.Absent("ws/sub/moved")
				h.Absent("ws/elsewhere")
			}},
		{Name: "work-go-module", Class: Work, Summary: "go mod init and go build of a module of several packages made in the workspace's top, the build cache inside it; the binary runs on the host",
			Run: func(h *H) {
				goBin, err := exec.LookPath("go")
				if err == nil {
					goBin, err = filepath.Abs(goBin)
				}
				if err != nil {
					h.NotApplicable("no go toolchain on PATH: %v", err)
				}
				_, p := h.ws()
				// A cold build cache: the standard library's runtime is
				// compiled too, a minute on a loaded 2-core host.
				h.LaunchTimeout = 5 * time.Minute
				o := h.Sandbox(p, `export GOCACHE="$PWD/.gocache" GOPATH="$PWD/.gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS="$GOFLAGS -mod=mod"
"$GO" mod init example.com/m >/dev/null 2>&1 && ok MOD_INIT
for i in 1 2 3 4 5 6; do mkdir -p p$i && printf 'package p%s\n\nfunc N() int { return %s }\n' $i $i > p$i/p.go; done
printf 'package main\n\nimport (\n\t"os"\n\t"strconv"\n\n\t"example.com/m/p1"\n\t"example.com/m/p6"\n)\n\nfunc main() { os.Stdout.WriteString(strconv.Itoa(p1.N()+p6.N()) + "\\n") }\n' > main.go
"$GO" build -o app . && ok BUILD; [ "$(./app)" = 7 ] && ok RUN`, "GO="+goBin)
				h.Expect(o, "MOD_INIT", "BUILD", "RUN")
				if s, ok := h.Read("ws/go.mod"); !ok || !strings.Contains(s, "module example.com/m") {
					h.Errorf("host: ws/go.mod is not the module's: %q", s)
				}
				if out := h.Host("ws", "./app"); strings.TrimSpace(out) != "7" {
					h.Errorf("host: ws/app printed %q, want 7", out)
				}
			}},
		{Name: "work-python-venv", Class: Work, Needs: []string{"python3"}, Summary: "python3 -m venv .venv in the workspace's top; the venv's python runs a script on the host",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `python3 -m venv --without-pip .venv && ok VENV; .venv/bin/python -c 'import sys; print(sys.prefix)' | grep -q '\.venv$' && ok VENV_PY`)
				h.Expect(o, "VENV", "VENV_PY")
				if !h.Exists("ws/.venv/pyvenv.cfg") {
					h.Errorf("host: no ws/.venv/pyvenv.cfg")
				}
			}},
		{Name: "work-npm-init", Class: Work, Needs: []string{"npm"}, Summary: "npm init -y and npm install of a local file: dependency at the workspace's top; package.json, package-lock.json and node_modules on the host",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("lib/package.json", `{"name":"lib","version":"1.0.0","main":"index.js"}`+"\n")
				h.Write("lib/index.js", "module.exports = 42;\n")
				o := h.Sandbox(p, `export npm_config_cache="$PWD/.npm-cache" npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
npm init -y >/dev/null && ok INIT; npm install --offline --install-links "$FIX/lib" >/dev/null 2>"$TMPDIR/err" && ok INSTALL || cat "$TMPDIR/err"
[ "$(node -e 'console.log(require("lib"))')" = 42 ] && ok REQUIRE`)
				h.Expect(o, "INIT", "INSTALL", "REQUIRE")
				if !h.Exists("ws/package-lock.json") || !h.Exists("ws/node_modules/lib/index.js") {
					h.Errorf("host: no ws/package-lock.json or ws/node_modules/lib/index.js")
				}
			}},
		{Name: "work-python-multiprocessing", Class: Work, Backends: linuxOnly, Needs: []string{"python3"}, Summary: "Python's multiprocessing: a Lock, shared_memory, a Pool and a Queue (POSIX semaphores and shared memory in /dev/shm); what they made there is gone after the launch",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `python3 -c '
import multiprocessing as mp
from multiprocessing import shared_memory
l = mp.Lock(); l.acquire(); l.release(); print("@@LOCK@@")
s = shared_memory.SharedMemory(create=True, size=4096); s.buf[0] = 7
t = shared_memory.SharedMemory(name=s.name); assert t.buf[0] == 7
t.close(); s.close(); s.unlink(); print("@@SHARED_MEMORY@@")
with mp.Pool(2) as pool: assert pool.map(abs, [-1, -2]) == [1, 2]
print("@@POOL@@")
q = mp.Queue(); q.put(3); assert q.get() == 3; print("@@QUEUE@@")
'`)
				h.Expect(o, "LOCK", "SHARED_MEMORY", "POOL", "QUEUE")
			}},
	}
}

// gateEscapeCases are the attempts the entry gate must still refuse
// under landlock, beside its work (and every backend refuses them).
func gateEscapeCases() []Case {
	return []Case{
		{Name: "create-protected-names-top", Class: NotYet, Summary: "make each protected name the workspace does not hold yet (.vscode, .mcp.json, .envrc, .git/hooks/x), as a file, a directory, a link and by rename; none appears on the host",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/payload", "x\n")
				o := h.Sandbox(p, `for n in .vscode .mcp.json .envrc .git; do
  touch $n 2>/dev/null && ok FILE$n; mkdir $n 2>/dev/null && ok DIR$n; ln -s payload $n 2>/dev/null && ok LINK$n
  cp payload tmp.$n && mv tmp.$n $n 2>/dev/null && ok MV$n; rm -f tmp.$n; ln payload $n 2>/dev/null && ok HARD$n
done; mkdir -p .git/hooks 2>/dev/null && ok HOOKS; true`)
				for _, n := range []string{".vscode", ".mcp.json", ".envrc", ".git"} {
					h.Refuse(o, "FILE"+n, "DIR"+n, "LINK"+n, "MV"+n, "HARD"+n)
					h.Absent("ws/" + n)
				}
				h.Refuse(o, "HOOKS")
			}},
		{Name: "gate-rename-holder-away", Class: Move, Summary: "rename a directory holding a read-only root, and the read-only root itself, away at the workspace's top, then write the freed name",
			Run: func(h *H) {
				_, p := h.ws()
				ro := h.Write("ws/lib/conf/ro.txt", "original\n")
				p.Readonly = []string{ro}
				o := h.Sandbox(p, `mv lib lib.away 2>/dev/null && ok MOVED_LIB; mv lib/conf conf.away 2>/dev/null && ok MOVED_CONF; mv lib/conf/ro.txt x 2>/dev/null && ok MOVED_RO
mkdir -p lib/conf 2>/dev/null; echo planted > lib/conf/ro.txt 2>/dev/null && ok PLANTED; true`)
				h.Refuse(o, "MOVED_LIB", "MOVED_CONF", "MOVED_RO", "PLANTED")
				h.Want("ws/lib/conf/ro.txt", "original\n")
				// Elsewhere mv falls back to copying (the mount is not
				// moved): a copy may appear; under landlock the gate
				// refuses the rename itself.
				if h.Backend() == "landlock" {
					h.Absent("ws/lib.away")
					h.Absent("ws/conf.away")
				}
			}},
		{Name: "gate-hardlink-readonly-top", Class: Hardlink, Summary: "hard-link a read-only file (outside and inside the workspace) to a new name at the workspace's top, then write through the link",
			Run: func(h *H) {
				_, p := h.ws()
				out := h.Write("outside/ro.txt", "original\n")
				in := h.Write("ws/sub/ro.txt", "original\n")
				p.Readonly = []string{out, in}
				// A write makes a new file where no link was made: only a
				// write through a link made counts.
				o := h.Sandbox(p, `ln "$FIX/outside/ro.txt" top 2>/dev/null && { ok LINKED_OUT; echo pwned >> top && ok WROTE_OUT; }
ln sub/ro.txt top2 2>/dev/null && { ok LINKED_IN; echo pwned >> top2 && ok WROTE_IN; }
ln -s "$FIX/outside/ro.txt" sym && ok SYMLINK; echo pwned >> sym 2>/dev/null && ok WROTE_SYM; true`)
				h.Refuse(o, "LINKED_OUT", "WROTE_OUT", "LINKED_IN", "WROTE_IN", "WROTE_SYM")
				h.Expect(o, "SYMLINK") // a link is decided at its target
				h.Want("outside/ro.txt", "original\n")
				h.Want("ws/sub/ro.txt", "original\n")
				h.Absent("ws/top")
				h.Absent("ws/top2")
			}},
		{Name: "shm-host-objects", Class: Kernel, Backends: linuxOnly, Summary: "open, append to, remove, link and rename an object another process keeps in the host's /dev/shm; it stays as it was, and the sandbox's own /dev/shm work succeeds",
			Run: func(h *H) {
				name := "cordon-conformance-" + filepath.Base(h.Dir)
				obj := filepath.Join("/dev/shm", name)
				if err := os.WriteFile(obj, []byte(h.Secret), 0o666); err != nil {
					h.NotApplicable("no /dev/shm to place an object in: %v", err)
				}
				os.Chmod(obj, 0o666)
				h.Cleanup(func() { os.Remove(obj) })
				_, p := h.ws()
				// Where /dev/shm is the sandbox's own (native, bwrap) the
				// object is not there to try: the host's copy judges.
				o := h.Sandbox(p, `o=/dev/shm/$NAME; if [ -e $o ]; then cat $o 2>/dev/null; echo x >> $o 2>/dev/null && ok APPENDED; true > $o 2>/dev/null && ok EMPTIED; rm -f $o 2>/dev/null; [ -e $o ] || ok REMOVED
ln $o /dev/shm/$NAME.l 2>/dev/null && ok LINKED; mv $o /dev/shm/$NAME.m 2>/dev/null && ok MOVED; fi
echo mine > /dev/shm/$NAME.own && rm /dev/shm/$NAME.own && ok OWN; true`, "NAME="+name)
				h.NoSecret(o)
				h.Refuse(o, "APPENDED", "EMPTIED", "REMOVED", "LINKED", "MOVED")
				h.Expect(o, "OWN")
				if b, err := os.ReadFile(obj); err != nil || string(b) != h.Secret {
					h.Errorf("host: %s changed or is gone: %q, %v", obj, b, err)
				}
				for _, sfx := range []string{".l", ".m", ".own"} {
					if _, err := os.Lstat(obj + sfx); err == nil {
						h.Errorf("host: %s%s exists", obj, sfx)
					}
				}
			}},
	}
}
