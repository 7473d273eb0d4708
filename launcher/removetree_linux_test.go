package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRemoveTree: a tree whose directories are not writable (Go's module
// cache, 0555) or closed (0000) goes whole; a link in it is removed, not
// followed, and what it points at keeps its mode and content. Run as a
// normal user to mean something: root removes what it likes.
func TestRemoveTree(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	require.NoError(t, os.Mkdir(outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o600))
	require.NoError(t, os.Chmod(outside, 0o555))
	t.Cleanup(func() { os.Chmod(outside, 0o700) })

	tree := filepath.Join(dir, "tree")
	mod := filepath.Join(tree, "mod", "example.com", "m@v1.0.0")
	require.NoError(t, os.MkdirAll(mod, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n"), 0o444))
	closed := filepath.Join(tree, "closed", "inner")
	require.NoError(t, os.MkdirAll(closed, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(closed, "f"), nil, 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(tree, "mod", "link")))
	for _, d := range []string{mod, filepath.Dir(mod), filepath.Join(tree, "mod")} {
		require.NoError(t, os.Chmod(d, 0o555))
	}
	require.NoError(t, os.Chmod(filepath.Dir(closed), 0o000))

	removeTree(tree)
	_, err := os.Lstat(tree)
	require.ErrorIs(t, err, os.ErrNotExist)
	fi, err := os.Stat(outside)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o555), fi.Mode().Perm(), "the link was followed")
	require.FileExists(t, filepath.Join(outside, "keep"))
}
