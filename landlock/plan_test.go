package landlock

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

func (fs fakeFS) ReadDir(dir string, max int) ([]Entry, error) {
	if dir != "/" && fs[dir] != EntryDir {
		return nil, fmt.Errorf("list %s: %w", dir, os.ErrNotExist)
	}
	if _, ok := fs[dir]; !ok && dir != "/" {
		return nil, fmt.Errorf("list %s: %w", dir, os.ErrNotExist)
	}
	var out []Entry
	for p, k := range fs {
		if p != "/" && parent(p) == dir {
			out = append(out, fakeEntry(p, k))
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > max+1 {
		out = out[:max+1]
	}
	return out, nil
}

func (fs fakeFS) Lstat(p string) (Entry, error) {
	k, ok := fs[p]
	if p == "/" {
		k, ok = EntryDir, true
	}
	if !ok {
		return Entry{}, &os.PathError{Op: "lstat", Path: p, Err: os.ErrNotExist}
	}
	return fakeEntry(p, k), nil
}

// fakeEntry gives each fake path an identity of its own.
func fakeEntry(p string, k EntryKind) Entry {
	h := fnv.New64a()
	h.Write([]byte(p))
	return Entry{Name: p[strings.LastIndexByte(p, '/')+1:], Kind: k, Dev: 1, Ino: h.Sum64() | 1}
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
func TestRenderNeverWider(t *testing.T) { neverWider(t, 1, nil) }

// TestRenderNeverWiderBounded: as TestRenderNeverWider, with bounds so
// small that split directories are bounded and rules left out: the plan
// is still never wider, and stricter only where it says so.
func TestRenderNeverWiderBounded(t *testing.T) {
	defer func(r, s, l int) { maxRules, maxSplit, maxListed = r, s, l }(maxRules, maxSplit, maxListed)
	neverWider(t, 5, randomBounds)
}

func randomBounds(rng *rand.Rand) {
	maxRules, maxSplit, maxListed = 1+rng.IntN(30), rng.IntN(4), rng.IntN(20)
}

func neverWider(t *testing.T, seed uint64, bound func(*rand.Rand)) {
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
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range 3000 {
		if bound != nil {
			bound(rng)
		}
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
		if e := fakeEntry(r.Path, objs[r.Path]); r.Dev != e.Dev || r.Ino != e.Ino {
			fail("rule on %s: identity %d:%d, listed as %d:%d", r.Path, r.Dev, r.Ino, e.Dev, e.Ino)
		}
	}
	if len(pl.Rules) > maxRules {
		fail("%d rules, more than %d", len(pl.Rules), maxRules)
	}
	// Beneath a directory not rendered entry by entry, off the way to
	// the boundaries below it, the plan may be stricter than the model;
	// past the rule bound, anywhere.
	capped := len(pl.Rules) == maxRules
	coarse := func(q string) bool {
		if capped {
			return true
		}
		for _, d := range pl.Bounded {
			if !below(q, d) {
				continue
			}
			kid := q
			for parent(kid) != d {
				kid = parent(kid)
			}
			onWay := within("/dev", kid) || within("/proc", kid)
			for _, r := range c.Roots() {
				onWay = onWay || within(r.Path, kid)
			}
			if !onWay {
				return true
			}
		}
		return false
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
		if coarse(p) {
			if !capped && slices.Equal(pl.Explain(p), []string{"as the model"}) {
				fail("%s: beneath a bounded directory, not explained", p)
			}
			continue
		}
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
			if root, ok := c.DecidingRoot(q); exists || parent(q) != p || frozen[p] || (ok && root.Path == q) || coarse(q) {
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

// TestRenderBounded: a split directory holding more entries than a plan
// renders apart does not fail the rendering: beneath it only what its
// whole subtree may do is granted (stricter, and said), and the way down
// to the roots below it is still rendered, so the carve-out below keeps
// its protection and the writable directories on the way stay writable.
func TestRenderBounded(t *testing.T) {
	defer func(n int) { maxSplit = n }(maxSplit)
	maxSplit = 50
	names := []string{"/big/sub/.git/config", "/big/sub/lib/x", "/big/out/", "/big/d/e"}
	for i := range 60 {
		names = append(names, fmt.Sprintf("/big/f%d", i))
	}
	fs := tree(names...)
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/big", "/big/out"},
		ReadonlyRoots: []string{"/big/sub/.git", "/big/.vscode"}, RestrictWrites: true})
	pl, err := Render(c, 7, fs, Options{})
	require.NoError(t, err)
	big := top + "/big"
	require.Equal(t, []string{big}, pl.Bounded)
	// No rule for the 60 files nor /big/d: they have what /big's subtree
	// may do (read, from the rule above it).
	require.Empty(t, cmp.Diff([]string{"dir  read", "dir /big/out read, write", "dir /big/sub/lib read, write"}, rules(pl)))
	require.True(t, pl.Allows(big+"/f1", OpRead))
	require.False(t, pl.Allows(big+"/f1", OpWrite), "stricter: only what the whole subtree may do")
	require.False(t, pl.Allows(big+"/d/e", OpWrite))
	require.True(t, pl.Allows(big+"/sub/lib/x", OpWrite), "on the way to the carve-out")
	require.True(t, pl.Allows(big+"/sub/lib/new", OpChange))
	require.True(t, pl.Allows(big+"/out/new", OpChange), "a writable root below")
	require.False(t, pl.Allows(big+"/sub/.git/config", OpWrite))
	require.False(t, pl.Allows(big+"/sub/.git/new", OpChange))
	require.False(t, pl.Allows(big+"/.vscode", OpChange))
	require.False(t, pl.Allows(big+"/new", OpChange), "frozen")
	require.Contains(t, strings.Join(pl.Explain(big+"/f1"), "\n"), big+" holds too many entries to grant each apart (more than 50")
	require.Contains(t, strings.Join(pl.Explain(big+"/d/e"), "\n"), "beneath it only what its whole subtree may do is granted (read)")
	checkPlan(t, "bounded", c, pl, fs, []string{big + "/.vscode", big + "/sub/.git/new"})

	// ABIs too old are still refused.
	_, err = Render(c, 1, tree(), Options{})
	require.ErrorContains(t, err, "ABI 1")
	// ABI 2 does not control truncation: a read-only file could be emptied.
	_, err = Render(c, 2, tree(), Options{})
	require.ErrorContains(t, err, "Linux 6.2")
}

// TestRenderBoundedBudget: split directories each under the per-directory
// bound, but over the plan's rule budget together: those past the budget
// are bounded, the plan stays within maxRules, and the roots below every
// one of them still get their rules.
func TestRenderBoundedBudget(t *testing.T) {
	defer func(n int) { maxRules = n }(maxRules)
	maxRules = 40
	var names []string
	var ro []string
	for d := 1; d <= 4; d++ {
		for i := range 12 {
			names = append(names, fmt.Sprintf("/d%d/f%d", d, i))
		}
		names = append(names, fmt.Sprintf("/d%d/.git/config", d))
		ro = append(ro, fmt.Sprintf("/d%d/.git", d))
	}
	fs := tree(names...)
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/d1", "/d2", "/d3", "/d4"}, ReadonlyRoots: ro, RestrictWrites: true})
	pl, err := Render(c, 7, fs, Options{})
	require.NoError(t, err)
	require.Equal(t, []string{top + "/d3", top + "/d4"}, pl.Bounded)
	require.LessOrEqual(t, len(pl.Rules), maxRules)
	require.True(t, pl.Allows(top+"/d2/f1", OpWrite))
	require.False(t, pl.Allows(top+"/d4/f1", OpWrite))
	require.False(t, pl.Allows(top+"/d4/.git/config", OpWrite))
	checkPlan(t, "budget", c, pl, fs, nil)

	// A policy with more roots than the budget: rules past it are left
	// out (stricter, said), never a refusal.
	maxRules = 3
	c = canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/d1", "/d2", "/d3", "/d4"}, RestrictWrites: true})
	pl, err = Render(c, 7, fs, Options{})
	require.NoError(t, err)
	require.Len(t, pl.Rules, 3)
	require.Contains(t, strings.Join(pl.Describe(), "\n"), "the plan holds 3 rules, its bound: "+top+"/d3 and what comes after it in the rendering get no rule of their own")
	require.False(t, pl.Allows(top+"/d4/f1", OpWrite))
	checkPlan(t, "capped", c, pl, fs, nil)
}

// TestRenderHugeDirectory: a split directory of a million entries is not
// read whole: the lister is asked for at most maxSplit+1 of them, and the
// plan is the bounded one.
func TestRenderHugeDirectory(t *testing.T) {
	fs := tree("/h/.git/config")
	h := &huge{fakeFS: fs, dir: top + "/h", n: 1_000_000}
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/h"}, ReadonlyRoots: []string{"/h/.git"}, RestrictWrites: true})
	pl, err := Render(c, 7, h, Options{})
	require.NoError(t, err)
	require.Equal(t, maxSplit, h.asked)
	require.LessOrEqual(t, h.read, maxSplit+1)
	require.Equal(t, []string{top + "/h"}, pl.Bounded)
	require.Less(t, len(pl.Rules), 5, "%v", rules(pl))
	require.False(t, pl.Allows(top+"/h/.git/config", OpWrite))
}

type huge struct {
	fakeFS
	dir         string
	n           int
	asked, read int
}

func (h *huge) ReadDir(dir string, max int) ([]Entry, error) {
	if dir != h.dir {
		return h.fakeFS.ReadDir(dir, max)
	}
	h.asked = max
	var out []Entry
	for i := 0; i < h.n && i <= max; i++ {
		out = append(out, fakeEntry(fmt.Sprintf("%s/f%07d", dir, i), EntryFile))
	}
	h.read += len(out)
	return out, nil
}

// TestRenderWorldWritableSplit: a user without a usable home keeps
// cordon's state in /tmp/cordon-<uid>, denied, which splits /tmp. Any
// local user can fill /tmp: past the bound it costs the plan only the
// way down to the workspace and the private TMPDIR made inside the state
// directory, and the launch is not refused.
func TestRenderWorldWritableSplit(t *testing.T) {
	names := []string{"/tmp/cordon-999/tmp/", "/tmp/cordon-999/audit/key", "/tmp/ws/src/a"}
	for i := range 10_050 {
		names = append(names, fmt.Sprintf("/tmp/flood%d", i))
	}
	fs := tree(names...)
	tmpdir := top + "/tmp/cordon-999/tmp/w1"
	c := canon(t, policy.FsSandboxPolicy{WritableRoots: []string{"/tmp/ws", "/tmp/cordon-999/tmp/w1"},
		DeniedRoots: []string{"/tmp/cordon-999"}, RestrictWrites: true})
	pl, err := Render(c, 7, fs, Options{Made: []string{tmpdir}})
	require.NoError(t, err)
	require.Contains(t, pl.Bounded, top+"/tmp")
	require.Less(t, len(pl.Rules), 10, "%v", rules(pl))
	require.True(t, pl.Allows(top+"/tmp/ws/src/a", OpWrite))
	require.True(t, pl.Allows(tmpdir+"/x", OpChange))
	require.False(t, pl.Allows(top+"/tmp/cordon-999/audit/key", OpRead))
	require.False(t, pl.Allows(top+"/tmp/flood1", OpRead), "stricter: the state directory denied below")
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

func (f failing) ReadDir(dir string, max int) ([]Entry, error) {
	if dir == f.bad {
		return nil, &os.PathError{Op: "open", Path: dir, Err: os.ErrPermission}
	}
	return f.fakeFS.ReadDir(dir, max)
}

// TestOSListerNoFollow: the OS lister reports links as links and
// refuses to list through one.
func TestOSListerNoFollow(t *testing.T) {
	d := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(d, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d, "f"), nil, 0o644))
	require.NoError(t, os.Symlink("sub", filepath.Join(d, "l")))
	es, err := OSLister{}.ReadDir(d, 10)
	require.NoError(t, err)
	var kinds []string
	for _, e := range es {
		kinds = append(kinds, fmt.Sprint(e.Name, e.Kind))
	}
	require.Equal(t, []string{"f0", "l2", "sub1"}, kinds)
	st, err := os.Lstat(filepath.Join(d, "sub"))
	require.NoError(t, err)
	require.Equal(t, st.Sys().(*syscall.Stat_t).Ino, es[2].Ino, "identity as lstat gives it")
	require.Equal(t, uint64(st.Sys().(*syscall.Stat_t).Dev), es[2].Dev)
	e, err := OSLister{}.Lstat(filepath.Join(d, "sub"))
	require.NoError(t, err)
	require.Equal(t, es[2], e)
	_, err = OSLister{}.ReadDir(filepath.Join(d, "l"), 10)
	require.ErrorContains(t, err, "not a directory")
	// A FIFO swapped in for the directory does not block the listing.
	require.NoError(t, syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644))
	_, err = OSLister{}.ReadDir(filepath.Join(d, "fifo"), 10)
	require.ErrorContains(t, err, "not a directory")
	// Swapped in between the lstat and the open: a FIFO (no writer)
	// neither blocks nor opens, a link is not followed.
	for _, p := range []string{"fifo", "l"} {
		_, err := openDir(filepath.Join(d, p))
		require.Error(t, err, p)
	}
	// The read is bounded: max+1 entries say there are more.
	for i := range 300 {
		require.NoError(t, os.WriteFile(filepath.Join(d, "sub", fmt.Sprint(i)), nil, 0o644))
	}
	es, err = OSLister{}.ReadDir(filepath.Join(d, "sub"), 100)
	require.NoError(t, err)
	require.Len(t, es, 101)
}

// TestRenderNeverWiderRandomTrees: as TestRenderNeverWider, over random
// trees too, with roots on what exists and on names that do not.
func TestRenderNeverWiderRandomTrees(t *testing.T) { neverWiderTrees(t, 3, nil) }

// TestRenderNeverWiderRandomTreesBounded: the same under tiny bounds.
func TestRenderNeverWiderRandomTreesBounded(t *testing.T) {
	defer func(r, s, l int) { maxRules, maxSplit, maxListed = r, s, l }(maxRules, maxSplit, maxListed)
	neverWiderTrees(t, 7, randomBounds)
}

func neverWiderTrees(t *testing.T, seed uint64, bound func(*rand.Rand)) {
	rng := rand.New(rand.NewPCG(seed, 4))
	names := []string{"a", "b", ".g"}
	for i := range 2000 {
		if bound != nil {
			bound(rng)
		}
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

// TestMayReadMeta: the gate's decision for reading extended attributes
// and watching. Nothing inside a denied root, nor the root itself; HOME,
// which the plan cannot list (it holds the denied root) but the model
// reads, and a link in it, which has no rule, may be read.
func TestMayReadMeta(t *testing.T) {
	fs := tree("/h/.ssh/id_ed25519", "/h/.ssh/link@", "/h/notes", "/h/proj/a", "/h/dotlink@")
	c := canon(t, policy.FsSandboxPolicy{DeniedRoots: []string{"/h/.ssh"}, RestrictWrites: true})
	pl := render(t, c, fs)
	h := top + "/h"
	require.False(t, pl.MayReadMeta(h+"/.ssh/id_ed25519", false))
	require.False(t, pl.MayReadMeta(h+"/.ssh/link", false))
	require.False(t, pl.MayReadMeta(h+"/.ssh", true))
	require.False(t, pl.MayReadMeta(h+"/.ssh/new", false), "made after the launch")
	require.True(t, pl.MayReadMeta(h+"/notes", false))
	require.True(t, pl.MayReadMeta(h+"/proj/a", false))
	require.True(t, pl.MayReadMeta(h+"/proj", true))
	require.False(t, pl.Allows(h, OpList))
	require.True(t, pl.MayReadMeta(h, true), "split: the model reads it")
	require.True(t, pl.MayReadMeta(h+"/dotlink", false), "a link in a split directory")
}
