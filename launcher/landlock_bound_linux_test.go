package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestLandlockBoundedSplit: a split directory holding more entries than
// a plan renders apart (a sandbox planted them, beside a nested
// repository it made) does not fail the next launch: beneath it only what
// its whole subtree may do is granted, and the way down to the
// repository's read-only .git and to the writable directory beside it is
// still rendered. What the plan no longer grants beneath it (writing its
// files, making entries) the entry gate does by the model, and .git
// stays read-only.
func TestLandlockBoundedSplit(t *testing.T) {
	needLandlock(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"src/sub/.git", "src/sub/lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	for i := range 20_000 {
		f, err := os.Create(filepath.Join(ws, "src", fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		f.Close()
	}
	p := policy.FsSandboxPolicy{WritableRoots: []string{ws}, ReadonlyRoots: []string{filepath.Join(ws, "src/sub/.git")}, RestrictWrites: true}
	script := `cat src/f1 && echo read
echo x > src/sub/lib/x && echo lib-written
echo x > src/sub/.git/PWNED 2>/dev/null && echo GIT-WRITTEN
echo x > src/f1 2>/dev/null && echo F1-WRITTEN
touch src/new 2>/dev/null && echo SRC-CHANGED
true`
	c := Command(p, "sh", "-c", script)
	c.Backend = BackendLandlock
	c.Dir = ws
	var eb strings.Builder
	c.Stderr = &eb
	out, err := c.Output()
	require.NoError(t, err, "%s%s", out, eb.String())
	require.Equal(t, "read\nlib-written\nF1-WRITTEN\nSRC-CHANGED\n", string(out))
	require.FileExists(t, filepath.Join(ws, "src/sub/lib/x"))
	require.NoFileExists(t, filepath.Join(ws, "src/sub/.git/PWNED"))
	require.FileExists(t, filepath.Join(ws, "src/new"))
	b, err := os.ReadFile(filepath.Join(ws, "src/f1"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(b))
}

// TestLandlockRuleIdentity: a directory swapped in under a listed name
// between the rendering and the init (the nested repository renamed to
// the name of a plain directory the plan grants writing beneath) is not
// the object the plan was made for: the launch is refused, naming it,
// and the repository's .git is not written.
func TestLandlockRuleIdentity(t *testing.T) {
	needLandlock(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"src/a", "src/sub/.git"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	p := policy.FsSandboxPolicy{WritableRoots: []string{ws}, ReadonlyRoots: []string{filepath.Join(ws, "src/sub/.git")}, RestrictWrites: true}
	src := filepath.Join(ws, "src")
	defer func() { testhook.Launch = nil }()
	testhook.Launch = func(_ any, point string) {
		if point != "mount" {
			return
		}
		require.NoError(t, os.Rename(filepath.Join(src, "a"), filepath.Join(src, "a.old")))
		require.NoError(t, os.Rename(filepath.Join(src, "sub"), filepath.Join(src, "a")))
	}
	c := Command(p, "sh", "-c", `echo pwn > src/a/.git/PWNED && echo WROTE`)
	c.Backend = BackendLandlock
	c.Dir = ws
	var eb strings.Builder
	c.Stderr = &eb
	out, err := c.Output()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v %s%s", err, out, eb.String())
	require.Equal(t, 125, ee.ExitCode(), "%s%s", out, eb.String())
	require.Contains(t, eb.String(), filepath.Join(src, "a")+": not the object the plan was made for")
	require.NoFileExists(t, filepath.Join(src, "a/.git/PWNED"))
}
