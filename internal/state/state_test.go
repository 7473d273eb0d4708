package state

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPathIgnoresHomeAndTmpdir(t *testing.T) {
	t.Setenv(EnvDir, "")
	before := Path()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	require.Equal(t, before, Path(), "the state directory followed the environment")

	t.Setenv(EnvDir, "relative/dir")
	require.Equal(t, before, Path(), "a relative override was taken")
	t.Setenv(EnvDir, "/s/cordon/")
	require.Equal(t, "/s/cordon", Path())
}

func TestDirCreatesPrivate(t *testing.T) {
	d := filepath.Join(t.TempDir(), "a", "b", "cordon")
	t.Setenv(EnvDir, d)
	got, err := Dir()
	require.NoError(t, err)
	require.Equal(t, d, got)
	fi, err := os.Lstat(d)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	sub, err := Sub(Tmp)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(d, Tmp), sub)
}

func TestPrivateRepairsMode(t *testing.T) {
	for _, mode := range []os.FileMode{0o755, 0o777, 0o000, 0o100} {
		d := filepath.Join(t.TempDir(), "tmp")
		require.NoError(t, os.Mkdir(d, 0o700))
		require.NoError(t, os.Chmod(d, mode))
		require.NoError(t, Private(d), "mode %v", mode)
		fi, err := os.Lstat(d)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "mode %v not repaired", mode)
	}
}

func TestPrivateRefuses(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "target")
	require.NoError(t, os.Mkdir(target, 0o700))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(target, link))
	require.ErrorContains(t, Private(link), "is a symlink")

	file := filepath.Join(base, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	require.ErrorContains(t, Private(file), "not a directory")

	if os.Getuid() == 0 {
		squat := filepath.Join(base, "squat")
		require.NoError(t, os.Mkdir(squat, 0o777))
		require.NoError(t, os.Chown(squat, 65534, 65534))
		err := Private(squat)
		require.ErrorContains(t, err, "belongs to uid 65534")
		require.ErrorContains(t, err, EnvDir, "the error does not name the fix")
	}
}
