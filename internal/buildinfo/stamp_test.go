package buildinfo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/buildinfo"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestStamped: the revision scripts/ldflags.sh stamps stands in where the
// go tool recorded none (a test binary records none).
func TestStamped(t *testing.T) {
	old := [3]string{buildinfo.Revision, buildinfo.Time, buildinfo.Modified}
	t.Cleanup(func() { buildinfo.Revision, buildinfo.Time, buildinfo.Modified = old[0], old[1], old[2] })
	buildinfo.Revision, buildinfo.Time, buildinfo.Modified = "0123456789abcdef", "2026-12-07T10:00:00Z", "true"
	i := buildinfo.Get()
	require.Equal(t, "0123456789abcdef", i.Revision)
	require.Equal(t, "2026-12-07T10:00:00Z", i.Time)
	require.True(t, i.Modified)
	require.Contains(t, i.String(), "(0123456789ab 2026-12-07T10:00:00Z, modified)")
}

// TestBuildNamesRevision builds cordon as try.sh does, with
// GOFLAGS=-buildvcs=false (as some machines set), from this checkout
// (a clone or a git worktree, whose .git the go tool does not read), and
// from a git worktree of a repository of the test's own holding the
// script: 'cordon version' names the checkout's revision and whether it
// was modified.
func TestBuildNamesRevision(t *testing.T) {
	git, err := exec.LookPath("git")
	testenv.Need(t, "git", err)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		testenv.NotApplicable(t, "the source is not a git checkout")
	}
	out := func(dir string, name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		b, err := cmd.Output()
		require.NoError(t, err, "%s %v", name, args)
		return strings.TrimSpace(string(b))
	}
	flags := out(root, filepath.Join(root, "scripts/ldflags.sh"))
	bin := filepath.Join(t.TempDir(), "cordon")
	build := exec.Command("go", "build", "-ldflags", flags, "-o", bin, "./cmd/cordon")
	build.Dir = root
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	b, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", b)
	rev := out(root, git, "rev-parse", "HEAD")
	modified := out(root, git, "status", "--porcelain") != ""
	v := out(root, bin, "version")
	require.Contains(t, v, rev[:12], "cordon version")
	require.Equal(t, modified, strings.Contains(v, "modified"), "cordon version: %s", v)

	// A worktree of a repository of the test's own: its revision, clean,
	// then modified.
	repo := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "scripts"), 0o755))
	s, err := os.ReadFile(filepath.Join(root, "scripts/ldflags.sh"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "scripts/ldflags.sh"), s, 0o755))
	g := func(dir string, args ...string) string {
		return out(dir, git, append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	}
	g(repo, "init", "-q")
	g(repo, "add", ".")
	g(repo, "commit", "-qm", "one")
	wt := filepath.Join(t.TempDir(), "wt")
	g(repo, "worktree", "add", "-q", wt)
	rev = g(wt, "rev-parse", "HEAD")
	script := filepath.Join(wt, "scripts/ldflags.sh")
	require.Contains(t, out(wt, script), "buildinfo.Revision="+rev+" ")
	require.Contains(t, out(wt, script), "buildinfo.Modified=false")
	require.NoError(t, os.WriteFile(filepath.Join(wt, "new"), nil, 0o644))
	require.Contains(t, out(wt, script), "buildinfo.Modified=true")
}
