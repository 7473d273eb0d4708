package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/safefs"
)

func TestStubNotRemovedWhenNoLongerEmpty(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := filepath.Join(dir, "stub")
	require.NoError(t, os.Mkdir(p, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p, "user-data"), nil, 0o644))
	removeStub(stubRecord{Path: p, Dir: true, Root: dir})
	require.DirExists(t, p)
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	removeStub(stubRecord{Path: f, Root: dir})
	require.FileExists(t, f)
	// An empty directory that replaced a stub (another inode) stays too.
	// (The stub is moved, not removed, so its inode is not reused.)
	q := filepath.Join(dir, "replaced")
	ino, _, err := createStub(dir, q, true, nil)
	require.NoError(t, err)
	require.NoError(t, os.Rename(q, q+".old"))
	require.NoError(t, os.Mkdir(q, 0o755))
	removeStub(stubRecord{Path: q, Dir: true, Ino: ino, Root: dir})
	require.DirExists(t, q, "the user's own directory, not the stub")
}

// TestStubsNeverThroughALink: a parent of a stub swapped for a link (as a
// sandbox writing the root could) fails the stub instead of making it
// where the link points, and removal does not follow one either.
func TestStubsNeverThroughALink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.Equal(t, ws, stubRoot(filepath.Join(ws, "d/x"), []string{"/", base, ws, ws + "x"}))
	require.Equal(t, "/", stubRoot("/etc/x", []string{ws}))

	ino, parent, err := createStub(ws, filepath.Join(ws, "d/x"), true, nil)
	require.NoError(t, err)
	rec := stubRecord{Path: filepath.Join(ws, "d/x"), Dir: true, Ino: ino, Root: ws}
	defer parent.Close()
	require.True(t, stubIntact(rec))

	// Swap d for a link to outside, where an empty x waits.
	require.NoError(t, os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "d.real")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "d")))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "x"), 0o755))
	require.False(t, stubIntact(rec))
	removeStub(rec)
	require.DirExists(t, filepath.Join(outside, "x"))
	_, _, err = createStub(ws, filepath.Join(ws, "d/y"), true, nil)
	require.ErrorIs(t, err, safefs.ErrSymlink)
	_, _, err = createStub(ws, filepath.Join(ws, "d/f"), false, nil)
	require.ErrorIs(t, err, safefs.ErrSymlink)
	ents, _ := os.ReadDir(outside)
	require.Len(t, ents, 1, "nothing made outside")

	// A launch that fails now removes what it made through the directory
	// it made it in, which no path leads to.
	r := &registry{mine: map[string]stubRecord{rec.Path: rec}}
	p2, err := parent.OpenRoot(".")
	require.NoError(t, err)
	r.undo(map[string]madeStub{rec.Path: {parent: p2, base: "x"}})
	p2.Close()
	require.NoDirExists(t, filepath.Join(ws, "d.real/x"))
	require.DirExists(t, filepath.Join(outside, "x"))
	ino, parent2, err := createStub(ws, filepath.Join(ws, "d.real/x"), true, nil)
	require.NoError(t, err)
	parent2.Close()
	rec = stubRecord{Path: filepath.Join(ws, "d/x"), Dir: true, Ino: ino, Root: ws}

	// Swapped back, the stub is cordon's again and goes.
	require.NoError(t, os.Remove(filepath.Join(ws, "d")))
	require.NoError(t, os.Rename(filepath.Join(ws, "d.real"), filepath.Join(ws, "d")))
	removeStub(rec)
	require.NoDirExists(t, filepath.Join(ws, "d/x"))
}

func TestUnescapeMount(t *testing.T) {
	require.Equal(t, "/a b\tc\\d", unescapeMount(`/a\040b\011c\134d`))
	require.Equal(t, "/plain", unescapeMount("/plain"))
	require.Equal(t, `/odd\04`, unescapeMount(`/odd\04`))
}

// TestMissingParentsNotThroughALink: with ws/d a link to outside, where x
// exists, ws/d/x is no parent that exists: the chain starts there, and
// making it meets the link (by path, x passed for existing and the chain
// began at ws/d/x/a, whose parent createStub then did not find).
func TestMissingParentsNotThroughALink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "x"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "d")))
	r := &registry{}
	chain := r.missingParents(filepath.Join(ws, "d/x/a/b/c"), map[string]bool{}, []string{ws})
	require.Equal(t, []string{filepath.Join(ws, "d/x"), filepath.Join(ws, "d/x/a"), filepath.Join(ws, "d/x/a/b")}, chain)
	_, _, err = createStub(ws, chain[0], true, nil)
	require.ErrorIs(t, err, safefs.ErrSymlink)

	// Without the link, the existing directory ends the chain.
	require.NoError(t, os.Remove(filepath.Join(ws, "d")))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "d/x"), 0o755))
	chain = r.missingParents(filepath.Join(ws, "d/x/a/b/c"), map[string]bool{}, []string{ws})
	require.Equal(t, []string{filepath.Join(ws, "d/x/a"), filepath.Join(ws, "d/x/a/b")}, chain)
	// Outside every writable root, from "/".
	chain = r.missingParents(filepath.Join(outside, "x/a/b"), map[string]bool{}, []string{ws})
	require.Equal(t, []string{filepath.Join(outside, "x/a")}, chain)
}

// A file stub holds its content, counts as cordon's only at the inode
// and size it was made with, and is removed only then.
func TestFileStubContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	ino, parent, err := createStub(dir, p, false, []byte("{}\n"))
	require.NoError(t, err)
	parent.Close()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(b))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	rec := stubRecord{Path: p, Ino: ino, Root: dir, Size: 3}
	require.True(t, stubIntact(rec))
	require.False(t, stubIntact(stubRecord{Path: p, Ino: ino, Root: dir}), "a record of an empty file is not this one")
	// Rewritten in place by the user's own agent: theirs now.
	require.NoError(t, os.WriteFile(p, []byte(`{"theme":"x"}`), 0o600))
	removeStub(rec)
	require.FileExists(t, p)
	require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
	removeStub(rec)
	require.NoFileExists(t, p)
}
