package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.json")
	for _, write := range []func(string, []byte) error{WriteFile, WriteFileSync} {
		require.NoError(t, write(name, []byte("one")))
		fi1, err := os.Stat(name)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi1.Mode().Perm())
		require.NoError(t, write(name, []byte("two")))
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		require.Equal(t, "two", string(b))
		fi2, err := os.Stat(name)
		require.NoError(t, err)
		require.False(t, os.SameFile(fi1, fi2), "replaced by a rename, not rewritten")
	}
	// A failed write leaves the file and no temporary one.
	require.Error(t, WriteFile(filepath.Join(dir, "missing", "f"), nil))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.Error(t, WriteFile(filepath.Join(dir, "d"), []byte("x")), "a directory is not replaced")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"f.json", "d"}, names)
}
