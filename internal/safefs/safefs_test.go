//go:build linux || darwin

package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fixture: root/dir/f (real), root/link -> outside, outside/f (secret).
func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dir"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "dir", "f"), []byte("inside"), 0o640))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "f"), []byte("secret"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))
	require.NoError(t, os.Symlink("dir/f", filepath.Join(root, "flink")))
	return root, outside
}

// both runs f with openat2 and with the per-component walk.
func both(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("walk", func(t *testing.T) {
		forceWalk(t)
		f(t)
	})
}

func TestOpenRefusesLinks(t *testing.T) {
	both(t, func(t *testing.T) {
		root, _ := fixture(t)
		r, err := OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		f, err := r.Open("dir/f")
		require.NoError(t, err)
		b, _ := io.ReadAll(f)
		f.Close()
		require.Equal(t, "inside", string(b))
		for _, p := range []string{"link/f", "flink", "link", "dir/../link/f"} {
			_, err := r.Open(p)
			require.ErrorIs(t, err, ErrSymlink, p)
			require.Contains(t, err.Error(), "is a symbolic link", p)
		}
		for _, p := range []string{"../outside/f", "/etc/passwd", "dir/../../outside/f"} {
			_, err := r.Open(p)
			require.ErrorIs(t, err, ErrOutside, p)
		}
		_, err = OpenRoot(filepath.Join(root, "link"))
		require.ErrorIs(t, err, ErrSymlink)
		require.Contains(t, err.Error(), filepath.Join(root, "link")+" is a symbolic link")
	})
}

func TestWriteFile(t *testing.T) {
	both(t, func(t *testing.T) {
		root, outside := fixture(t)
		r, err := OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		require.NoError(t, r.WriteFile("dir/f", []byte("new"), 0o600))
		b, _ := os.ReadFile(filepath.Join(root, "dir/f"))
		require.Equal(t, "new", string(b))
		fi, _ := os.Stat(filepath.Join(root, "dir/f"))
		require.Equal(t, fs.FileMode(0o640), fi.Mode().Perm(), "an existing file keeps its mode")
		require.ErrorIs(t, r.WriteFile("link/f", []byte("pwn"), 0o644), ErrSymlink)
		require.ErrorIs(t, r.WriteFile("flink", []byte("pwn"), 0o644), ErrSymlink)
		b, _ = os.ReadFile(filepath.Join(outside, "f"))
		require.Equal(t, "secret", string(b))
		// No temporary file is left behind.
		ents, _ := os.ReadDir(filepath.Join(root, "dir"))
		require.Len(t, ents, 1)

		d, err := r.MkdirAll("a/b/c", 0o755)
		require.NoError(t, err)
		require.NoError(t, d.WriteFile("new", []byte("x"), 0o644))
		d.Close()
		require.FileExists(t, filepath.Join(root, "a/b/c/new"))
		_, err = r.MkdirAll("link/sub", 0o755)
		require.ErrorIs(t, err, ErrSymlink)
		require.NoDirExists(t, filepath.Join(outside, "sub"))
	})
}

func TestMkdirRemoveIf(t *testing.T) {
	both(t, func(t *testing.T) {
		root, outside := fixture(t)
		require.NoError(t, os.Mkdir(filepath.Join(outside, "stub"), 0o755))
		r, err := OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		require.ErrorIs(t, r.Mkdir("link/x", 0o755), ErrSymlink)
		require.NoDirExists(t, filepath.Join(outside, "x"))
		require.ErrorIs(t, r.Mkdir("link", 0o755), fs.ErrExist, "a link at the name is not followed")
		any := func(Info) bool { return true }
		_, err = r.RemoveIf("link/stub", any)
		require.ErrorIs(t, err, ErrSymlink)
		require.DirExists(t, filepath.Join(outside, "stub"))
		require.NoError(t, r.Mkdir("dir/stub", 0o755))
		in, err := r.Lstat("dir/stub")
		require.NoError(t, err)
		require.True(t, in.IsDir())
		ok, err := r.RemoveIf("dir/stub", func(i Info) bool { return i.Ino == in.Ino })
		require.NoError(t, err)
		require.True(t, ok)
		f, err := r.CreateExcl("dir/file", 0o644)
		require.NoError(t, err)
		f.Close()
		_, err = r.CreateExcl("flink", 0o644)
		require.ErrorIs(t, err, fs.ErrExist)
	})
}

func TestWalkStaysInside(t *testing.T) {
	both(t, func(t *testing.T) {
		root, _ := fixture(t)
		r, err := OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		var seen []string
		require.NoError(t, r.Walk(".", func(rel string, typ fs.FileMode) error {
			seen = append(seen, rel+":"+typ.String())
			return nil
		}))
		require.Equal(t, []string{".:d---------", "dir:d---------", "dir/f:----------", "flink:L---------", "link:L---------"}, seen)
	})
}

func TestOpenFIFODoesNotBlock(t *testing.T) {
	root, _ := fixture(t)
	require.NoError(t, mkfifo(filepath.Join(root, "fifo")))
	r, err := OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	f, err := r.Open("fifo")
	require.NoError(t, err)
	f.Close()
}

func TestErrorsAreTyped(t *testing.T) {
	root, _ := fixture(t)
	r, err := OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Open("nope")
	require.True(t, errors.Is(err, fs.ErrNotExist))
}
