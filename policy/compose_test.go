package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func composeFixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"ws/bin", "ws/home", "agents/a1/.git/hooks", "agents/p0", "elsewhere/bin", "denied/bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	return dir
}

func TestCheckIDs(t *testing.T) {
	dir := composeFixture(t)
	sub := filepath.Join(dir, "ws/bin")
	c, err := Canonicalize(FsSandboxPolicy{WritableRoots: []string{sub}, RestrictWrites: true})
	require.NoError(t, err)
	ids := c.IDs()
	require.Contains(t, ids, sub)
	again, err := Canonicalize(FsSandboxPolicy{WritableRoots: []string{sub}, RestrictWrites: true})
	require.NoError(t, err)
	require.NoError(t, again.CheckIDs(ids))

	// Swapped for a symlink: the root now resolves elsewhere.
	require.NoError(t, os.Rename(sub, sub+".real"))
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), sub))
	again, err = Canonicalize(FsSandboxPolicy{WritableRoots: []string{sub}, RestrictWrites: true})
	require.NoError(t, err)
	require.ErrorContains(t, again.CheckIDs(ids), "root "+sub+" changed after the policy was built")

	// Swapped for another directory of the same name.
	require.NoError(t, os.Remove(sub))
	require.NoError(t, os.Mkdir(sub, 0o755))
	again, err = Canonicalize(FsSandboxPolicy{WritableRoots: []string{sub}, RestrictWrites: true})
	require.NoError(t, err)
	require.ErrorContains(t, again.CheckIDs(ids), "changed after the policy was built (was ")

	// A readonly root that is gone still protects its path.
	ro := filepath.Join(dir, "ws/home")
	c, err = Canonicalize(FsSandboxPolicy{ReadonlyRoots: []string{ro}})
	require.NoError(t, err)
	ids = c.IDs()
	require.Contains(t, ids, ro)
	require.NoError(t, os.Remove(ro))
	again, err = Canonicalize(FsSandboxPolicy{ReadonlyRoots: []string{ro}})
	require.NoError(t, err)
	require.NoError(t, again.CheckIDs(ids))
}

// TestRecanonicalize: canonicalizing again on a canonical policy's view
// takes what that view found (a root swapped since is seen as it was),
// looks up only new paths, and leaves the view it started from as it was.
func TestRecanonicalize(t *testing.T) {
	dir := composeFixture(t)
	sub := filepath.Join(dir, "ws/bin")
	p := FsSandboxPolicy{WritableRoots: []string{sub}, RestrictWrites: true}
	c, err := Canonicalize(p)
	require.NoError(t, err)
	seen := len(c.seen)

	require.NoError(t, os.Rename(sub, sub+".real"))
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), sub))
	fresh, err := Canonicalize(p)
	require.NoError(t, err)
	require.Error(t, fresh.CheckIDs(c.IDs()), "a fresh look sees the swap")

	more := p
	more.DeniedRoots = []string{filepath.Join(dir, "ws/home")}
	again, err := c.Recanonicalize(more)
	require.NoError(t, err)
	require.NoError(t, again.CheckIDs(c.IDs()), "the view's look, taken again")
	require.Equal(t, []string{sub}, again.Policy().WritableRoots)
	require.Equal(t, more.DeniedRoots, again.Policy().DeniedRoots)
	require.Len(t, c.seen, seen, "the view is not written to")
}

// TestLoadFileRefusesSpecialFiles: a policy file that is a FIFO, or a
// link to a device, is refused at once (neither waited on nor opened); a
// link to a regular file is read.
func TestLoadFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, zero, link, real := filepath.Join(dir, "fifo"), filepath.Join(dir, "zero"), filepath.Join(dir, "link"), filepath.Join(dir, "real.json")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Symlink("/dev/zero", zero))
	require.NoError(t, os.WriteFile(real, []byte(`{"deniedRoots":["/secret"]}`), 0o644))
	require.NoError(t, os.Symlink(real, link))
	for _, bad := range []string{fifo, zero} {
		_, err := LoadFile(bad)
		require.ErrorIs(t, err, boundedread.ErrNotRegular, bad)
	}
	f, err := LoadFile(link)
	require.NoError(t, err)
	require.Equal(t, []string{"/secret"}, f.DeniedRoots)

}
