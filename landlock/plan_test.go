package landlock

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// The fake trees live under a top directory no host has, so that
// canonicalization keeps their roots as spelt.
const top = "/nonexistent-cordon-ll"

// fakeFS is a tree: path -> kind. Its directories list their children.
type fakeFS map[string]EntryKind

func tree(paths ...string) fakeFS {
	fs := fakeFS{top: EntryDir}
	for _, p := range paths {
		k := EntryFile
		switch {
		case strings.HasSuffix(p, "/"):
			k, p = EntryDir, strings.TrimSuffix(p, "/")
		case strings.HasSuffix(p, "@"):
			k, p = EntrySymlink, strings.TrimSuffix(p, "@")
		}
		fs[top+p] = k
		for q := parent(top + p); q != "/" && q != top; q = parent(q) {
			fs[q] = EntryDir
		}
	}
	return fs
}

func (fs fakeFS) ReadDir(dir string) ([]Entry, error) {
	if dir != "/" && fs[dir] != EntryDir {
		return nil, fmt.Errorf("list %s: %w", dir, os.ErrNotExist)
	}
	if _, ok := fs[dir]; !ok && dir != "/" {
		return nil, fmt.Errorf("list %s: %w", dir, os.ErrNotExist)
	}
	var out []Entry
	for p, k := range fs {
		if p != "/" && parent(p) == dir {
			out = append(out, Entry{Name: p[strings.LastIndexByte(p, '/')+1:], Kind: k})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func canon(t *testing.T, p policy.FsSandboxPolicy) *policy.Canonical {
	t.Helper()
	for _, f := range []*[]string{&p.BaseWritableRoots, &p.DeniedRoots, &p.ReadonlyRoots, &p.WritableRoots} {
		for i, r := range *f {
			(*f)[i] = top + r
		}
	}
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	return c
}

func render(t *testing.T, c *policy.Canonical, fs Lister) *Plan {
	t.Helper()
	pl, err := Render(c, 7, fs, Options{})
	require.NoError(t, err)
	return pl
}

// rules shows a plan's rules relative to top, for comparison.
func rules(pl *Plan) []string {
	var out []string
	for _, r := range pl.Rules {
		k := "dir"
		if !r.Dir {
			k = "file"
		}
		out = append(out, fmt.Sprintf("%s %s %s", k, strings.TrimPrefix(r.Path, top), rightsText(r.Access, pl.HandledFS)))
	}
	return out
}

func rel(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimPrefix(p, top))
	}
	return out
}

// TestRenderIssueExamples: the four shapes the backend must get right.
func TestRenderIssueExamples(t *testing.T) {
	t.Run("workspace writable with .git read-only", func(t *testing.T) {
		fs := tree("/w/.git/config", "/w/.git/hooks/", "/w/src/main.go", "/w/Makefile", "/w/link@")
		c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/w"}, ReadonlyRoots: []string{"/w/.git"}, RestrictWrites: true})
		pl := render(t, c, fs)
		require.Empty(t, cmp.Diff([]string{
			"dir  read", // top: "/" is split by /dev, so each entry is granted apart
			"file /w/Makefile read files, run, write files, truncate",
			"dir /w/src read, write",
		}, rules(pl)))
		require.Equal(t, []string{"/w"}, rel(pl.Frozen))
		require.Contains(t, strings.Join(pl.Explain(top+"/w/new"), "\n"),
			"nothing can be created, removed or renamed directly in "+top+"/w: it holds read-only "+top+"/w/.git")
		require.True(t, pl.Allows(top+"/w/src/new.go", OpChange))
		require.True(t, pl.Allows(top+"/w/Makefile", OpWrite))
		require.False(t, pl.Allows(top+"/w/.git/config", OpWrite))
		require.False(t, pl.Allows(top+"/w/.git/hooks/pre-commit", OpChange))
		require.False(t, pl.Allows(top+"/w/.git", OpChange), "the carve-out cannot be renamed away")
		require.True(t, pl.Allows(top+"/w/.git/config", OpRead))
		require.Equal(t, []string{"as the model"}, pl.Explain(top+"/w/src/main.go"))
	})
	t.Run("HOME readable with .ssh denied", func(t *testing.T) {
		fs := tree("/h/.ssh/id_ed25519", "/h/notes", "/h/proj/a")
		c := canon(t, policy.FsSandboxPolicy{DeniedRoots: []string{"/h/.ssh"}, RestrictWrites: true})
		pl := render(t, c, fs)
		require.Empty(t, cmp.Diff([]string{"file /h/notes read files, run", "dir /h/proj read"}, rules(pl)))
		require.Equal(t, []string{"/", "", "/h"}, rel(pl.Unlistable))
		require.Empty(t, pl.Frozen)
		require.False(t, pl.Allows(top+"/h/.ssh/id_ed25519", OpRead))
		require.False(t, pl.Allows(top+"/h/.ssh", OpList))
		require.False(t, pl.Allows(top+"/h", OpList))
		require.True(t, pl.Allows(top+"/h/notes", OpRead))
		require.Equal(t, []string{top + "/h cannot be listed: it holds denied " + top + "/h/.ssh; what appears in it after launch cannot be read (Landlock grants on whole trees, so each entry is granted apart instead)"},
			pl.Explain(top+"/h"))
	})
	t.Run("a protected name absent", func(t *testing.T) {
		fs := tree("/w/src/", "/w/.config/")
		c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/w"}, ReadonlyRoots: []string{"/w/.vscode", "/w/.config/git/config"}, RestrictWrites: true})
		pl := render(t, c, fs)
		require.Equal(t, []string{"/w", "/w/.config"}, rel(pl.Frozen))
		require.False(t, pl.Allows(top+"/w/.vscode", OpChange), "cannot be made")
		require.False(t, pl.Allows(top+"/w/.config/git", OpChange), "nor the way to a deeper one")
		require.True(t, pl.Allows(top+"/w/src/x", OpChange))
		require.Contains(t, pl.Explain(top + "/w")[0], "read-only "+top+"/w/.vscode (not there yet: protected before it exists)")
	})
	t.Run("restrictWrites false", func(t *testing.T) {
		fs := tree("/etc/passwd", "/s/key", "/x/y/")
		c := canon(t, policy.FsSandboxPolicy{DeniedRoots: []string{"/s"}, ReadonlyRoots: []string{"/etc"}})
		pl := render(t, c, fs)
		require.Empty(t, cmp.Diff([]string{"dir /etc read", "dir /x read, write"}, rules(pl)))
		require.Equal(t, []string{"/", ""}, rel(pl.Frozen))
		require.True(t, pl.Allows(top+"/x/y/z", OpChange))
		require.False(t, pl.Allows(top+"/new", OpChange))
	})
	t.Run("a writable root that does not exist", func(t *testing.T) {
		c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/gone"}, RestrictWrites: true})
		pl := render(t, c, tree("/a"))
		require.False(t, pl.Allows(top+"/gone/x", OpChange))
		require.Contains(t, strings.Join(pl.Explain(top+"/gone/x"), "\n"), "writable root "+top+"/gone does not exist")
	})
	t.Run("a directory made at launch", func(t *testing.T) {
		c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/tmpdir/t1"}, RestrictWrites: true})
		pl, err := Render(c, 7, tree("/tmpdir/"), Options{Made: []string{top + "/tmpdir/t1"}})
		require.NoError(t, err)
		require.True(t, pl.Allows(top+"/tmpdir/t1/x", OpChange))
	})
}

// TestRenderNeverWider: for random policies over a fake tree, the plan's
// own model never allows what the policy's refuses, and equals it except
// where the plan says it is stricter (a frozen or unlistable directory).
func TestRenderNeverWider(t *testing.T) {
	fs := tree("/a/x", "/a/y/z", "/a/y/w/", "/b/c/f", "/b/l@", "/b/c/d/e", "/f", "/e/")
	// The host's /dev and /proc, which no policy opens.
	for p, k := range map[string]EntryKind{"/dev": EntryDir, "/dev/null": EntryOther, "/dev/sda": EntryOther,
		"/dev/pts": EntryDir, "/dev/pts/0": EntryOther, "/proc": EntryDir, "/proc/sys": EntryDir, "/proc/sys/x": EntryFile} {
		fs[p] = k
	}
	paths := []string{"/"}
	for p := range fs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	// Names that do not exist, where a root may be named all the same.
	absent := []string{top + "/a/new", top + "/b/c/ghost", top + "/q/r", top + "/a/y/w/n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var p policy.FsSandboxPolicy
		p.RestrictWrites = rng.IntN(2) == 0
		used := map[string]bool{}
		for range rng.IntN(6) {
			var r string
			if rng.IntN(4) == 0 {
				r = absent[rng.IntN(len(absent))]
			} else {
				r = paths[rng.IntN(len(paths))]
			}
			if used[r] {
				continue
			}
			used[r] = true
			f := []*[]string{&p.BaseWritableRoots, &p.DeniedRoots, &p.ReadonlyRoots, &p.WritableRoots}[rng.IntN(4)]
			*f = append(*f, r)
		}
		c, err := policy.Canonicalize(p)
		if err != nil {
			continue // "/" denied
		}
		abi := MinABI + rng.IntN(8-MinABI)
		pl, err := Render(c, abi, fs, DefaultOptions())
		require.NoError(t, err)
		checkPlan(t, fmt.Sprintf("policy %d %+v abi %d", i, p, abi), c, pl, fs, absent)
	}
}

func checkPlan(t *testing.T, name string, c *policy.Canonical, pl *Plan, fs fakeFS, absent []string) {
	t.Helper()
	frozen := map[string]bool{}
	for _, d := range pl.Frozen {
		frozen[d] = true
	}
	unlistable := map[string]bool{}
	for _, d := range pl.Unlistable {
		unlistable[d] = true
	}
	read := func(p string) bool { return c.Access(p, policy.Read) }
	write := func(p string) bool { return c.Access(p, policy.Write) }
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("%s: %s\nrules %v\nfrozen %v", name, fmt.Sprintf(format, a...), rules(pl), pl.Frozen)
	}
	objs := map[string]EntryKind{"/": EntryDir}
	for p, k := range fs {
		objs[p] = k
	}
	for _, r := range pl.Rules {
		if k, ok := objs[r.Path]; !ok || k == EntrySymlink || r.Dir != (k == EntryDir) {
			fail("rule on %s (dir %v), which is %v on the host", r.Path, r.Dir, k)
		}
	}
	for p, k := range objs {
		if k == EntrySymlink {
			continue
		}
		dir := k == EntryDir
		got := pl.Rights(p, dir)
		if within(p, "/dev") || within(p, "/proc") {
			// The host's, not the policy's: only the fixed extras.
			want := uint64(0)
			switch {
			case p == "/dev/null":
				want = DeviceRights
			case within(p, "/proc") && c.Access(p, policy.Read):
				want = procRights
			}
			// /proc may be split by a root inside it: never more, then.
			if got&^want != 0 || (!within(p, "/proc") && got != want&pl.HandledFS) {
				fail("%s: %s granted, want %s", p, rightsText(got, pl.HandledFS), rightsText(want, pl.HandledFS))
			}
			continue
		}
		// Never wider.
		if got&ReadRights != 0 && !read(p) {
			fail("%s: reads granted, the model denies", p)
		}
		if got&(WriteFile|Truncate) != 0 && !write(p) {
			fail("%s: writes granted, the model refuses", p)
		}
		if dir && got&ChangeRights != 0 {
			// Make rights reach every name below: existing, absent, new.
			for _, q := range append(append(slices.Collect(mapsKeys(objs)), absent...), p+"/brand-new", p+"/brand-new/deeper") {
				if below(q, p) && !write(q) && !within(q, "/dev") && !within(q, "/proc") {
					fail("%s: entries may be made in %s, the model refuses %s", p, p, q)
				}
			}
		}
		// Equal where the plan does not say otherwise.
		if !dir {
			if pl.Allows(p, OpRead) != read(p) || pl.Allows(p, OpWrite) != write(p) {
				fail("%s: read %v write %v, model %v %v", p, pl.Allows(p, OpRead), pl.Allows(p, OpWrite), read(p), write(p))
			}
		} else if !unlistable[p] && pl.Allows(p, OpList) != read(p) {
			fail("%s: list %v, model %v", p, pl.Allows(p, OpList), read(p))
		}
		// A root itself cannot be made, removed or renamed (its rights
		// are its parent's), as under the mount backends, where it is a
		// mount point.
		if root, ok := c.DecidingRoot(p); ok && root.Path == p {
			continue
		}
		if p != "/" && !frozen[parent(p)] && pl.Allows(p, OpChange) != write(p) {
			fail("%s: change %v, model %v", p, pl.Allows(p, OpChange), write(p))
		}
	}
	// Names that do not exist: made as the model says, unless their
	// directory is frozen.
	for p, k := range objs {
		if k != EntryDir || within(p, "/dev") || within(p, "/proc") {
			continue
		}
		for _, q := range append(absent, p+"/brand-new") {
			_, exists := objs[q]
			if root, ok := c.DecidingRoot(q); exists || parent(q) != p || frozen[p] || (ok && root.Path == q) {
				continue
			}
			if pl.Allows(q, OpChange) != write(q) {
				fail("new %s: change %v, model %v", q, pl.Allows(q, OpChange), write(q))
			}
		}
	}
	for _, d := range pl.Frozen {
		if !write(d) {
			fail("frozen %s, which the model does not let be written anyway", d)
		}
	}
}

func mapsKeys(m map[string]EntryKind) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestRenderHostExtras: /dev and /proc are the host's, not the policy's:
// only the fixed device files and reading /proc are granted, whatever
// the policy (restrictWrites false included).
func TestRenderHostExtras(t *testing.T) {
	fs := fakeFS{"/dev": EntryDir, "/dev/null": EntryOther, "/dev/sda": EntryOther, "/dev/pts": EntryDir,
		"/proc": EntryDir, "/proc/sys": EntryDir, "/usr": EntryDir}
	c, err := policy.Canonicalize(policy.FsSandboxPolicy{})
	require.NoError(t, err)
	pl, err := Render(c, 7, fs, DefaultOptions())
	require.NoError(t, err)
	require.True(t, pl.Allows("/dev/null", OpWrite))
	require.False(t, pl.Allows("/dev/sda", OpRead))
	require.False(t, pl.Allows("/dev/pts/0", OpRead))
	require.True(t, pl.Allows("/proc/sys/kernel/core_pattern", OpRead))
	require.False(t, pl.Allows("/proc/sys/kernel/core_pattern", OpWrite))
	require.True(t, pl.Allows("/usr/x", OpChange), "restrictWrites false")
	require.Contains(t, strings.Join(pl.Explain("/dev/sda"), "\n"), "only the fixed device files")
	require.Equal(t, []string{"granted beyond the policy: read and write: a device file every sandbox has"}, pl.Explain("/dev/null"))
	require.Contains(t, strings.Join(pl.Describe(), "\n"), "/dev/null: read and write")
}

// TestRenderBounded: a rendering that would need too many rules is
// refused, naming the directory; as is an ABI too old.
func TestRenderBounded(t *testing.T) {
	defer func(n int) { maxRules = n }(maxRules)
	maxRules = 50
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("/big/f%d", i))
	}
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/big"}, ReadonlyRoots: []string{"/big/.git"}, RestrictWrites: true})
	_, err := Render(c, 7, tree(names...), Options{})
	require.ErrorContains(t, err, "more than 50 rules: directory "+top+"/big is split")
	_, err = Render(c, 1, tree(), Options{})
	require.ErrorContains(t, err, "ABI 1")
	// ABI 2 does not control truncation: a read-only file could be emptied.
	_, err = Render(c, 2, tree(), Options{})
	require.ErrorContains(t, err, "Linux 6.2")
}

// TestRenderUnlistable: a split directory that cannot be listed gets
// only what its whole subtree may do, and says so.
func TestRenderUnlistable(t *testing.T) {
	fs := tree("/w/a/")
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/w", "/gone/in"}, ReadonlyRoots: []string{"/w/nope/ro"}, RestrictWrites: true})
	fs[top+"/w/nope"] = EntryDir // listed by its parent, but ReadDir refuses it
	pl := render(t, c, failing{fs, top + "/w/nope"})
	require.False(t, pl.Allows(top+"/w/nope/x", OpChange))
	require.True(t, pl.Allows(top+"/w/nope/x", OpRead))
	require.Contains(t, strings.Join(pl.Explain(top+"/w/nope/x"), "\n"), "could not be listed when the plan was made (permission denied)")
}

type failing struct {
	fakeFS
	bad string
}

func (f failing) ReadDir(dir string) ([]Entry, error) {
	if dir == f.bad {
		return nil, &os.PathError{Op: "open", Path: dir, Err: os.ErrPermission}
	}
	return f.fakeFS.ReadDir(dir)
}

// TestOSListerNoFollow: the OS lister reports links as links and
// refuses to list through one.
func TestOSListerNoFollow(t *testing.T) {
	d := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(d, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d, "f"), nil, 0o644))
	require.NoError(t, os.Symlink("sub", filepath.Join(d, "l")))
	es, err := OSLister{}.ReadDir(d)
	require.NoError(t, err)
	require.Equal(t, []Entry{{"f", EntryFile}, {"l", EntrySymlink}, {"sub", EntryDir}}, es)
	_, err = OSLister{}.ReadDir(filepath.Join(d, "l"))
	require.ErrorContains(t, err, "not a directory")
}

// TestRenderNeverWiderRandomTrees: as TestRenderNeverWider, over random
// trees too, with roots on what exists and on names that do not.
func TestRenderNeverWiderRandomTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "b", ".g"}
	for i := range 2000 {
		var spec []string
		for range 1 + rng.IntN(12) {
			p := ""
			for range 1 + rng.IntN(4) {
				p += "/" + names[rng.IntN(len(names))]
			}
			switch rng.IntN(4) {
			case 0:
				p += "/"
			case 1:
				p += "@"
			}
			spec = append(spec, p)
		}
		fs := tree(spec...)
		// A path spelt as a file and as a directory's parent is a
		// directory (tree marks parents after): keep the tree coherent.
		for p := range fs {
			for q := parent(p); q != "/" && q != top; q = parent(q) {
				fs[q] = EntryDir
			}
		}
		var candidates []string
		for p := range fs {
			candidates = append(candidates, p, p+"/"+names[rng.IntN(len(names))])
		}
		slices.Sort(candidates)
		var p policy.FsSandboxPolicy
		p.RestrictWrites = rng.IntN(2) == 0
		used := map[string]bool{}
		for range rng.IntN(5) {
			r := candidates[rng.IntN(len(candidates))]
			if used[r] {
				continue
			}
			used[r] = true
			f := []*[]string{&p.BaseWritableRoots, &p.DeniedRoots, &p.ReadonlyRoots, &p.WritableRoots}[rng.IntN(4)]
			*f = append(*f, r)
		}
		c, err := policy.Canonicalize(p)
		require.NoError(t, err)
		pl, err := Render(c, MinABI+rng.IntN(8-MinABI), fs, Options{})
		require.NoError(t, err)
		var absent []string
		for _, q := range candidates {
			if _, ok := fs[q]; !ok {
				absent = append(absent, q)
			}
		}
		checkPlan(t, fmt.Sprintf("tree %d %v policy %+v", i, spec, p), c, pl, fs, absent)
	}
}

// TestMayChangeMeta: the metadata gate's decision. A file in a writable
// root may change; one in a read-only carve-out, outside the roots or a
// device file granted beyond the policy may not; nor may a frozen
// directory (its mode reaches what is granted below it).
func TestMayChangeMeta(t *testing.T) {
	w := top + "/w"
	fs := tree("/w/.git/hooks/h", "/w/f", "/w/src/x", "/out")
	fs["/dev"], fs["/dev/null"] = EntryDir, EntryOther
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/w"}, ReadonlyRoots: []string{"/w/.git", ""}, RestrictWrites: true})
	pl, err := Render(c, 7, fs, DefaultOptions())
	require.NoError(t, err)
	require.True(t, pl.MayChangeMeta(w+"/f", false))
	require.True(t, pl.MayChangeMeta(w+"/src", true))
	require.True(t, pl.MayChangeMeta(w+"/src/x", false))
	require.False(t, pl.MayChangeMeta(w, true), "frozen")
	require.False(t, pl.MayChangeMeta(w+"/.git/hooks/h", false))
	require.False(t, pl.MayChangeMeta(w+"/.git", true))
	require.False(t, pl.MayChangeMeta(top+"/out", false))
	require.True(t, pl.Allows("/dev/null", OpWrite))
	require.False(t, pl.MayChangeMeta("/dev/null", false), "a device file granted beyond the policy")
}
