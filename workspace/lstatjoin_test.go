package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLstatJoin: lstatJoin answers as lstat(2) of the joined path does,
// for a file, a directory, a symlink (not followed), a missing name and
// a path too long for its buffer.
func TestLstatJoin(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.Symlink("f", filepath.Join(dir, "l")))
	long := filepath.Join(dir, strings.Repeat("n", 200), strings.Repeat("m", 200))
	require.NoError(t, os.MkdirAll(long, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(long, "f"), nil, 0o644))
	var buf [512]byte
	for _, c := range [][2]string{{dir, "f"}, {dir, "d"}, {dir, "l"}, {dir, "missing"}, {long, "f"}} {
		var got, want syscall.Stat_t
		gerr := lstatJoin(&buf, c[0], c[1], &got)
		werr := syscall.Lstat(c[0]+"/"+c[1], &want)
		require.Equal(t, werr, gerr, "%s", c[1])
		require.Equal(t, want, got, "%s", c[1])
	}
}
