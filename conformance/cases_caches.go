package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Package and build caches (docs/design.md, "Private caches"): each tool
// finds a writable cache of the workspace's own, kept between launches;
// the host's caches, and another workspace's, stay out of reach.
func cacheCases() []Case {
	return []Case{
		{Name: "work-go-build-cache", Class: Work, Summary: "go build of a module in two launches: GOCACHE is the workspace's private cache, filled by the first, hit by the second (nothing compiled again)",
			Run: func(h *H) {
				goBin := h.goTool()
				_, p := h.ws()
				h.goModule("ws/src/lib")
				want := h.privateCache(p) + "/go-build"
				env := []string{"GO=" + goBin, "WANT=" + want, "GOTOOLCHAIN=local", "GOTELEMETRY=off"}
				o := h.Sandbox(p, `cd src/lib && [ "$("$GO" env GOCACHE)" = "$WANT" ] && ok PRIVATE; "$GO" build -x . 2>"$TMPDIR/x" && ok BUILD; grep -q '/compile ' "$TMPDIR/x" && ok COMPILED; rm -f "$TMPDIR/x"`, env...)
				h.Expect(o, "PRIVATE", "BUILD", "COMPILED")
				if n := entries(want); n == 0 {
					h.Errorf("host: the private build cache %s is empty after the first build", want)
				}
				w := h.Sandbox(p, `cd src/lib && "$GO" build -x . 2>"$TMPDIR/x" && ok BUILD; grep -q '/compile ' "$TMPDIR/x" || ok WARM; rm -f "$TMPDIR/x"`, env...)
				h.Expect(w, "BUILD", "WARM")
			}},
		{Name: "work-npm-cache", Class: Work, Needs: []string{"npm"}, Summary: "npm cache add of a local tarball, offline: it lands in the workspace's private npm cache, kept for the next launch",
			Run: func(h *H) {
				h.LaunchTimeout = 2 * time.Minute // node starts slowly on a loaded machine
				_, p := h.ws()
				h.Write("ws/pkg/package/package.json", `{"name":"demo","version":"1.0.0"}`+"\n")
				h.Host("ws/pkg", "tar", "czf", "demo-1.0.0.tgz", "package")
				want := h.privateCache(p) + "/npm"
				o := h.Sandbox(p, `[ "$npm_config_cache" = "$WANT" ] && ok PRIVATE; npm cache add "$PWD/pkg/demo-1.0.0.tgz" --offline --no-update-notifier >/dev/null 2>&1 && ok ADD`, "WANT="+want)
				h.Expect(o, "PRIVATE", "ADD")
				if entries(filepath.Join(want, "_cacache", "index-v5")) == 0 {
					h.Errorf("host: npm's index in the private cache %s is empty after npm cache add", want)
				}
				w := h.Sandbox(p, `npm cache verify --offline 2>&1 | grep -q 'Content verified: 1 ' && ok KEPT`)
				h.Expect(w, "KEPT")
			}},
		{Name: "work-pip-cache", Class: Work, Needs: []string{"python3"}, Summary: "pip wheel of a local sdist, offline: the built wheel lands in the workspace's private pip cache, and the next launch takes it from there",
			Run: func(h *H) {
				py, _ := lookPath("python3")
				for _, probe := range [][]string{{"-m", "pip", "--version"}, {"-c", "import setuptools"}} {
					if out, err := exec.Command(py, probe...).CombinedOutput(); err != nil {
						h.NotApplicable("needs python3 with pip and setuptools: %s", strings.TrimSpace(string(out)))
					}
				}
				h.LaunchTimeout = 2 * time.Minute // a wheel build starts a few interpreters
				_, p := h.ws()
				h.Write("ws/sd/demo2-1.0/setup.py", "from setuptools import setup\nsetup(name='demo2', version='1.0', py_modules=['demo2'])\n")
				h.Write("ws/sd/demo2-1.0/demo2.py", "X = 2\n")
				h.Write("ws/sd/demo2-1.0/PKG-INFO", "Metadata-Version: 1.0\nName: demo2\nVersion: 1.0\n")
				h.Host("ws/sd", "tar", "czf", "demo2-1.0.tar.gz", "demo2-1.0")
				h.Mkdir("ws/out")
				want := h.privateCache(p) + "/pip"
				wheel := `python3 -m pip wheel --no-index --no-build-isolation --disable-pip-version-check --find-links "$PWD/sd" demo2 -w out`
				o := h.Sandbox(p, `[ "$PIP_CACHE_DIR" = "$WANT" ] && ok PRIVATE; `+wheel+` >/dev/null 2>&1 && ok WHEEL`, "WANT="+want)
				h.Expect(o, "PRIVATE", "WHEEL")
				if !h.Exists("ws/out/demo2-1.0-py3-none-any.whl") {
					h.Errorf("host: the wheel is not in ws/out")
				}
				var cached []string
				filepath.WalkDir(filepath.Join(want, "wheels"), func(q string, d os.DirEntry, err error) error {
					if err == nil && strings.HasSuffix(q, ".whl") {
						cached = append(cached, q)
					}
					return nil
				})
				if len(cached) == 0 {
					h.Errorf("host: no wheel in the private pip cache %s after pip wheel", want)
				}
				w := h.Sandbox(p, `rm -f out/*.whl; `+wheel+` 2>&1 | grep -q 'Using cached demo2' && ok FROM_CACHE; [ -f out/demo2-1.0-py3-none-any.whl ] && ok WHEEL`)
				h.Expect(w, "FROM_CACHE", "WHEEL")
			}},
		{Name: "autoexec-host-caches", Class: AutoExec, Summary: "with HOME in the workspace, the host's Go build and module caches and npm cache stay read-only (the host's next build trusts them); go build runs all the same, on the private cache",
			Run: func(h *H) {
				goBin := h.goTool()
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				h.Mkdir("ws/home/work")
				h.goModule("ws/home/work/lib")
				entry := h.Write("ws/home/.cache/go-build/00/0000-d", "host object\n")
				list := h.Write("ws/home/go/pkg/mod/cache/download/example.com/m/@v/list", "v1.0.0\n")
				src := h.Write("ws/home/go/pkg/mod/example.com/m@v1.0.0/m.go", "package m\n")
				idx := h.Write("ws/home/.npm/_cacache/index-v5/00/x", "host index\n")
				env := []string{"GO=" + goBin, "GOTOOLCHAIN=local", "GOTELEMETRY=off", "XDG_CACHE_HOME=" + h.Path("ws/home/.cache"),
					"E=" + entry, "L=" + list, "S=" + src, "I=" + idx}
				o := h.Sandbox(p, `echo evil > "$E" && ok GOCACHE_ENTRY; mkdir "$(dirname "$E")/../ff" && ok GOCACHE_NEW; echo v6.6.6 >> "$L" && ok MODCACHE_LIST; echo 'package m; func init() { panic(1) }' > "$S" && ok MODCACHE_SRC; rm -rf "$HOME/.npm/_cacache" && ok NPM_RM; echo evil > "$I" && ok NPM_INDEX; cd "$HOME/work/lib" && "$GO" build . && ok BUILD; echo done > "$HOME/work/notes" && ok HOME_WRITE`, env...)
				h.Refuse(o, "GOCACHE_ENTRY", "GOCACHE_NEW", "MODCACHE_LIST", "MODCACHE_SRC", "NPM_RM", "NPM_INDEX")
				h.Expect(o, "BUILD", "HOME_WRITE")
				h.Want("ws/home/.cache/go-build/00/0000-d", "host object\n")
				h.Absent("ws/home/.cache/go-build/ff")
				h.Want("ws/home/go/pkg/mod/cache/download/example.com/m/@v/list", "v1.0.0\n")
				h.Want("ws/home/go/pkg/mod/example.com/m@v1.0.0/m.go", "package m\n")
				h.Want("ws/home/.npm/_cacache/index-v5/00/x", "host index\n")
				h.Want("ws/home/work/notes", "done\n")
			}},
		{Name: "cross-launch-cache-other-workspace", Class: CrossLaunch, Summary: "what a sandbox of workspace A puts in its cache is kept for A and out of reach of a sandbox of workspace B (read, list, write)",
			Run: func(h *H) {
				pa := Policy{Workspace: h.Mkdir("wsa")}
				pb := Policy{Workspace: h.Mkdir("wsb")}
				ca, cb := h.privateCache(pa), h.privateCache(pb)
				if ca == cb {
					h.Fatalf("fixture: workspaces A and B share the cache %s", ca)
				}
				o := h.Sandbox(pa, `mkdir -p "$GOCACHE" && echo "$PLANTED" > "$GOCACHE/planted" && ok PLANT`, "PLANTED="+h.Secret) // a name the environment filter passes
				h.Expect(o, "PLANT")
				planted := filepath.Join(ca, "go-build", "planted")
				if b, err := os.ReadFile(planted); err != nil || string(b) != h.Secret+"\n" {
					h.Errorf("host: A's cache does not hold what A's sandbox put there (%v)", err)
				}
				w := h.Sandbox(pb, `[ "$GOCACHE" = "$OWN/go-build" ] && ok OWN; mkdir -p "$GOCACHE" && echo b > "$GOCACHE/b" && ok WRITE_OWN; cat "$A/go-build/planted"; ls "$A" && ok LIST_A; echo evil > "$A/go-build/planted" && ok WRITE_A; mkdir "$A/npm" && ok MKDIR_A; true`, "A="+ca, "OWN="+cb)
				h.Expect(w, "OWN", "WRITE_OWN")
				h.Refuse(w, "LIST_A", "WRITE_A", "MKDIR_A")
				h.NoSecret(w)
				if b, err := os.ReadFile(planted); err != nil || string(b) != h.Secret+"\n" {
					h.Errorf("host: B's sandbox changed A's cache (%q, %v)", b, err)
				}
				if _, err := os.Lstat(filepath.Join(ca, "npm")); err == nil {
					h.Errorf("host: B's sandbox made a directory in A's cache")
				}
			}},
		{Name: "work-home-workspace-again", Class: Work, Summary: "HOME as the workspace, with cordon's state directory in it, three launches in a row: each succeeds and writes in HOME (the scan never enters the state directory, whose masks are closed)",
			Run: func(h *H) {
				if h.InProcess() {
					h.NotApplicable("the state directory of an in-process launch is the harness's, not one in the case's HOME")
				}
				h.Mkdir("home/work")
				sd := h.Path("home/.local/state/cordon")
				p := Policy{Workspace: h.Home}
				for i := range 3 {
					o := h.Sandbox(p, `echo run >> work/runs && ok RAN`, state.EnvDir+"="+sd)
					if !Marked(o, "RAN") {
						h.Fatalf("launch %d with HOME as the workspace failed:\n%s", i+1, o)
					}
				}
				h.Want("home/work/runs", "run\nrun\nrun\n")
				if h.Backend() != "landlock" && entries(filepath.Join(sd, state.Run, "masks")) == 0 {
					h.Errorf("fixture: no mask in %s: the case did not make what it is about", sd)
				}
			}},
	}
}

// goTool is a go command every user of the run can execute, or the case
// is not applicable: the sandbox's PATH has none (Go lives in
// /usr/local/go or in GOROOT).
func (h *H) goTool() string {
	cand := []string{filepath.Join(os.Getenv("GOROOT"), "bin", "go"), "/usr/local/go/bin/go", "/usr/lib/go/bin/go"}
	if p, err := exec.LookPath("go"); err == nil {
		cand = append(cand, p)
	}
	for _, c := range cand {
		if fi, err := os.Stat(c); err == nil && filepath.IsAbs(c) && fi.Mode().IsRegular() && fi.Mode().Perm()&0o001 != 0 {
			return c
		}
	}
	h.NotApplicable("needs a go command that every user can run (GOROOT, /usr/local/go)")
	return ""
}

// goModule writes a Go module of one package that imports nothing, so a
// build compiles only it: the first build with an empty cache is quick.
func (h *H) goModule(rel string) {
	h.Write(rel+"/go.mod", "module example.com/lib\n\ngo 1.21\n")
	h.Write(rel+"/lib.go", "package lib\n\nfunc F() int { return 1 }\n")
}

// privateCache is the private cache the workspace preset gives p's
// workspace when the case's user launches it, as the host sees it.
func (h *H) privateCache(p Policy) string {
	comp, err := workspace.Compose(p.Spec(h.env(nil), h.Attack()))
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return filepath.Join(state.PathFor(h.User.Uid), state.Cache, filepath.Base(comp.CacheDir))
}

// entries counts the entries of dir (0 when it cannot be read).
func entries(dir string) int {
	ents, _ := os.ReadDir(dir)
	return len(ents)
}
