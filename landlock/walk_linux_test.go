package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openNoLinks, the init's walk where openat2 is missing, refuses a link
// on the way or at the end as openat2's RESOLVE_NO_SYMLINKS does.
func TestOpenNoLinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link")))
	fd, err := openNoLinks(filepath.Join(dir, "a", "b"))
	require.NoError(t, err)
	var st, want unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	unix.Close(fd)
	require.NoError(t, unix.Stat(filepath.Join(dir, "a", "b"), &want))
	require.Equal(t, want.Ino, st.Ino)
	for _, p := range []string{filepath.Join(dir, "link"), filepath.Join(dir, "link", "b")} {
		_, err := openNoLinks(p)
		require.ErrorIs(t, err, unix.ELOOP, p)
	}
	_, err = openNoLinks(dir + "/a/../a")
	require.ErrorIs(t, err, unix.EXDEV)
	_, err = openNoLinks(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, unix.ENOENT)
}
