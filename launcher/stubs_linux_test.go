package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStubNotRemovedWhenNoLongerEmpty(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stub")
	require.NoError(t, os.Mkdir(p, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p, "user-data"), nil, 0o644))
	removeStub(stubRecord{Path: p, Dir: true})
	require.DirExists(t, p)
	f := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	removeStub(stubRecord{Path: f})
	require.FileExists(t, f)
	// An empty directory that replaced a stub (another inode) stays too.
	// (The stub is moved, not removed, so its inode is not reused.)
	q := filepath.Join(dir, "replaced")
	ino, err := createStub(q, true)
	require.NoError(t, err)
	require.NoError(t, os.Rename(q, q+".old"))
	require.NoError(t, os.Mkdir(q, 0o755))
	removeStub(stubRecord{Path: q, Dir: true, Ino: ino})
	require.DirExists(t, q, "the user's own directory, not the stub")
}

func TestUnescapeMount(t *testing.T) {
	require.Equal(t, "/a b\tc\\d", unescapeMount(`/a\040b\011c\134d`))
	require.Equal(t, "/plain", unescapeMount("/plain"))
	require.Equal(t, `/odd\04`, unescapeMount(`/odd\04`))
}
