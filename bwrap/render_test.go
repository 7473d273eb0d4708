package bwrap

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeFS answers Stat from a fixed list: paths ending in "/" are
// directories, others files; anything else does not exist.
func fakeFS(paths ...string) StatFunc {
	m := map[string]bool{}
	for _, p := range paths {
		m[strings.TrimSuffix(p, "/")] = strings.HasSuffix(p, "/")
	}
	return func(p string) (bool, bool) {
		dir, ok := m[p]
		return ok, dir
	}
}

// canon canonicalizes without touching the host's real paths: every root
// in these tests lives under /nonexistent-cordon-test, which Resolve keeps
// as spelled.
func canon(t *testing.T, p policy.FsSandboxPolicy) *policy.Canonical {
	t.Helper()
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	return c
}

const root = "/nonexistent-cordon-test"

func TestGolden(t *testing.T) {
	r := func(s string) string { return root + s }
	tests := []struct {
		name string
		p    policy.FsSandboxPolicy
		fs   StatFunc
		opt  Options
	}{
		{"empty", policy.FsSandboxPolicy{}, fakeFS(), Options{}},
		{"workspace", policy.FsSandboxPolicy{
			WritableRoots:  []string{r("/ws"), r("/tmp/priv")},
			ReadonlyRoots:  []string{r("/ws/.git/hooks"), r("/ws/.git/config"), r("/ws/.vscode")},
			DeniedRoots:    []string{r("/home/.ssh"), r("/home/.netrc")},
			RestrictWrites: true,
		}, fakeFS(r("/ws/"), r("/tmp/priv/"), r("/ws/.git/"), r("/ws/.git/hooks/"), r("/ws/.git/config"), r("/home/.ssh/"), r("/home/.netrc")),
			Options{DisableUserns: true, Chdir: r("/ws")}},
		{"nested carves", policy.FsSandboxPolicy{
			DeniedRoots:   []string{r("/d"), r("/d/w/d2")},
			WritableRoots: []string{r("/d/w"), r("/d/w/d2/w2/")}, // w2: a missing directory
			ReadonlyRoots: []string{r("/d/w/ro")},
		}, fakeFS(r("/d/"), r("/d/w/"), r("/d/w/d2/")), Options{Network: true}},
		{"missing writable file", policy.FsSandboxPolicy{
			// out.log a file, cache/ a directory, a/ a directory for
			// the root below it, whatever their spelling.
			WritableRoots:  []string{r("/w/out.log"), r("/w/cache/"), r("/w/a"), r("/w/a/b.log")},
			RestrictWrites: true,
		}, fakeFS(r("/w/")), Options{}},
		{"readonly in writable, unrestricted", policy.FsSandboxPolicy{
			WritableRoots: []string{r("/w")},
			ReadonlyRoots: []string{r("/w/a/b/ro")},
		}, fakeFS(r("/w/"), r("/w/a/"), r("/w/a/b/"), r("/w/a/b/ro/")), Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opt.Stat = tt.fs
			tt.opt.EmptyFile = "/run/cordon/empty"
			tt.opt.MaskRoot = "/run/cordon/masks"
			pl, err := Render(canon(t, tt.p), tt.opt)
			require.NoError(t, err)
			var b strings.Builder
			for _, a := range pl.Args {
				if strings.HasPrefix(a, "--") {
					b.WriteString("\n")
				} else {
					b.WriteString(" ")
				}
				b.WriteString(a)
			}
			b.WriteString("\n\nmasks:\n")
			for _, m := range pl.Masks {
				b.WriteString(m.Key + ":")
				for _, e := range m.Entries {
					fmt.Fprintf(&b, " %s(dir=%v)", e.Rel, e.Dir)
				}
				b.WriteString("\n")
			}
			got := strings.TrimPrefix(b.String(), "\n")
			file := filepath.Join("testdata", strings.ReplaceAll(tt.name, " ", "_")+".golden")
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run with -update to create it")
			require.Empty(t, cmp.Diff(string(want), got))
		})
	}
}

// TestMountOrderFollowsTheModel checks the invariants that make bwrap's
// mount table equal the model: every root is mounted after each shallower
// root containing it, a mask holds exactly the mount points directly
// below it, and each writable ancestor of a protected root is pinned.
func TestMountOrderFollowsTheModel(t *testing.T) {
	p := policy.FsSandboxPolicy{
		DeniedRoots:    []string{root + "/a", root + "/a/b/c", root + "/x/y"},
		WritableRoots:  []string{root + "/a/b", root + "/x"},
		ReadonlyRoots:  []string{root + "/a/b/c/d", root + "/x/y/z/r"},
		RestrictWrites: true,
	}
	c := canon(t, p)
	var exist []string
	for _, r := range c.Roots() {
		exist = append(exist, r.Path+"/")
	}
	pl, err := Render(c, Options{Stat: fakeFS(exist...), EmptyFile: "/e", MaskRoot: "/m"})
	require.NoError(t, err)
	pos := map[string]int{}
	maskOf := map[string]string{}
	for i := 0; i < len(pl.Args); i++ {
		switch pl.Args[i] {
		case "--bind", "--ro-bind":
			pos[pl.Args[i+2]] = i
			if strings.HasPrefix(pl.Args[i+1], "/m/") {
				maskOf[pl.Args[i+2]] = strings.TrimPrefix(pl.Args[i+1], "/m/")
			}
			i += 2
		}
	}
	for _, r := range c.Roots() {
		require.Contains(t, pos, r.Path)
		for _, anc := range policy.Ancestors(r.Path) {
			if at, ok := pos[anc]; ok && anc != "/" {
				require.Less(t, at, pos[r.Path], "%s must be mounted before %s", anc, r.Path)
			}
		}
	}
	masks := map[string][]MaskEntry{}
	for _, m := range pl.Masks {
		masks[m.Key] = m.Entries
	}
	want := map[string][]MaskEntry{
		root + "/a":     {{Rel: "b", Dir: true}},   // b is writable; c, d lie inside it
		root + "/a/b/c": {{Rel: "d", Dir: true}},   // readonly carve
		root + "/x/y":   {{Rel: "z/r", Dir: true}}, // a mount point two levels down
	}
	for d, entries := range want {
		require.Equal(t, entries, masks[maskOf[d]], d)
	}
	// A denied root deep inside a writable one: its writable ancestors
	// that are not roots themselves must be pinned so they cannot be
	// renamed away with the secret inside.
	c2 := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{root + "/w"}, DeniedRoots: []string{root + "/w/p/q/secret"}})
	pl2, err := Render(c2, Options{Stat: fakeFS(root+"/w/", root+"/w/p/q/secret"), EmptyFile: "/e", MaskRoot: "/m"})
	require.NoError(t, err)
	joined := strings.Join(pl2.Args, " ")
	for _, a := range []string{root + "/w/p", root + "/w/p/q"} {
		require.Contains(t, joined, "--bind "+a+" "+a, "writable ancestor %s pinned", a)
	}
	pl3, err := Render(c2, Options{Stat: fakeFS(root + "/w/"), EmptyFile: "/e", MaskRoot: "/m"})
	require.NoError(t, err)
	require.NotContains(t, strings.Join(pl3.Args, " "), root+"/w/p", "an absent denied root is the entry gate's: no mount, no pin")
}

func TestRenderHardening(t *testing.T) {
	pl, err := Render(canon(t, policy.FsSandboxPolicy{RestrictWrites: true}), Options{Stat: fakeFS(), DisableUserns: true})
	require.NoError(t, err)
	a := strings.Join(pl.Args, " ")
	for _, want := range []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--disable-userns",
		"--cap-drop ALL", "--new-session", "--die-with-parent", "--ro-bind / /", "--proc /proc", "--dev /dev"} {
		require.Contains(t, a, want)
	}
	pl, err = Render(canon(t, policy.FsSandboxPolicy{}), Options{Stat: fakeFS(), Network: true})
	require.NoError(t, err)
	a = strings.Join(pl.Args, " ")
	require.Contains(t, a, "--bind / /", "unrestricted writes bind the host read-write")
	require.NotContains(t, a, "--unshare-net")
}

func TestDeniedFileNeedsEmptyFile(t *testing.T) {
	_, err := Render(canon(t, policy.FsSandboxPolicy{DeniedRoots: []string{root + "/f"}}), Options{Stat: fakeFS(root + "/f")})
	require.ErrorContains(t, err, root+"/f")
}

// TestRenderBindFD: roots the launcher opened are bound from their
// descriptors; pins and roots it did not open are bound by path.
func TestRenderBindFD(t *testing.T) {
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{root + "/w", root + "/v"}, ReadonlyRoots: []string{root + "/w/p/ro"}, RestrictWrites: true})
	fds := map[string]int{root + "/w": 7, root + "/w/p/ro": 8}
	pl, err := Render(c, Options{Stat: fakeFS(root+"/w/", root+"/w/p/ro/"), FD: func(p string) (int, bool) { fd, ok := fds[p]; return fd, ok }})
	require.NoError(t, err)
	a := strings.Join(pl.Args, " ")
	require.Contains(t, a, "--bind-fd 7 "+root+"/w")
	require.Contains(t, a, "--ro-bind-fd 8 "+root+"/w/p/ro")
	require.Contains(t, a, "--bind "+root+"/v "+root+"/v")
	require.Contains(t, a, "--bind "+root+"/w/p "+root+"/w/p", "a pin stays a bind by path")
}

// TestMountsOnly: the native backend's render has the same mounts
// and masks, no argv, and the same refusals.
func TestMountsOnly(t *testing.T) {
	c, err := policy.Canonicalize(policy.FsSandboxPolicy{
		RestrictWrites: true,
		WritableRoots:  []string{"/w", "/d/carve"},
		ReadonlyRoots:  []string{"/w/.git"},
		DeniedRoots:    []string{"/d", "/w/secret.txt"},
	})
	require.NoError(t, err)
	opt := Options{Stat: fakeFS("/w", "/w/.git", "/d", "/w/secret.txt"), EmptyFile: "/e", MaskRoot: "/m"}
	full, err := Render(c, opt)
	require.NoError(t, err)
	opt.MountsOnly = true
	only, err := Render(c, opt)
	require.NoError(t, err)
	require.Empty(t, only.Args)
	require.NotEmpty(t, full.Args)
	require.Equal(t, full.Mounts, only.Mounts)
	require.Equal(t, full.Masks, only.Masks)
	require.Equal(t, full.Seccomp, only.Seccomp)

	opt.MaskRoot, opt.EmptyFile = "", ""
	_, err = Render(c, opt)
	require.ErrorContains(t, err, "needs Options.")
}

// TestMissingWritableFile: a writable root that does not exist is bound
// as the file or directory the launcher makes there: an empty file unless
// it is spelled as a directory or has a root below it.
func TestMissingWritableFile(t *testing.T) {
	r := func(s string) string { return root + s }
	c := canon(t, policy.FsSandboxPolicy{
		WritableRoots:  []string{r("/w/out.log"), r("/w/cache/"), r("/w/a"), r("/w/a/b.log")},
		RestrictWrites: true,
	})
	pl, err := Render(c, Options{Stat: fakeFS(r("/w/"))})
	require.NoError(t, err)
	got := map[string]bool{}
	for _, m := range pl.Mounts {
		if m.Kind == MountBind {
			got[strings.TrimPrefix(m.Path, root)] = m.Dir
		}
	}
	require.Equal(t, map[string]bool{"/w/out.log": false, "/w/cache": true, "/w/a": true, "/w/a/b.log": false}, got)
	require.Contains(t, c.Policy().WritableRoots, r("/w/cache/"), "a missing directory keeps its spelling for the launcher")
	require.Contains(t, c.Policy().WritableRoots, r("/w/out.log"))
}

// An absent read-only or denied root gets no mount at all: the entry gate
// keeps its name from being made, so nothing of cordon's stands for it on
// the host.
func TestRenderAbsentProtected(t *testing.T) {
	c := canon(t, policy.FsSandboxPolicy{
		WritableRoots: []string{root + "/w"},
		ReadonlyRoots: []string{root + "/w/settings.json", root + "/w/commands", root + "/w/here"},
		DeniedRoots:   []string{root + "/w/creds.json", root + "/w/gone"},
	})
	pl, err := Render(c, Options{Stat: fakeFS(root+"/w/", root+"/w/here/", root+"/w/gone/"), EmptyFile: "/e", MaskRoot: "/m"})
	require.NoError(t, err)
	var paths []string
	for _, m := range pl.Mounts {
		paths = append(paths, strings.TrimPrefix(m.Path, root))
	}
	require.Equal(t, []string{"", "/w", "/w/gone", "/w/here"}, paths, "the pin of "+root+", the roots that exist")
}
