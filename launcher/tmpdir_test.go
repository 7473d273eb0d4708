package launcher

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestTidyTmpDirs: a TMPDIR no launch used for a month goes, with what a
// sandbox left in it, but not what it points at; one a launch holds
// stays, and goes once released; nothing else in the directory is
// touched; the tidy runs once a day.
func TestTidyTmpDirs(t *testing.T) {
	defer func(b time.Duration) { tmpTidyBudget = b }(tmpTidyBudget)
	tmpTidyBudget = time.Hour // a loaded machine must not cut the tidy short
	parent := t.TempDir()
	outside := filepath.Join(t.TempDir(), "keep")
	require.NoError(t, os.WriteFile(outside, []byte("x"), 0o600))
	old := filepath.Join(parent, "aaaaaaaaaaaa")
	require.NoError(t, os.MkdirAll(filepath.Join(old, "deep"), 0o700))
	require.NoError(t, os.Symlink(outside, filepath.Join(old, "deep", "link")))
	require.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(old, "dirlink")))
	held, err := holdTmpDir(filepath.Join(parent, "bbbbbbbbbbbb"))
	require.NoError(t, err)
	require.NotNil(t, held, "nothing else holds it: the shared lock is had")
	others := []string{"not-a-tmpdir", "ABCDEFABCDEF", ".tidied-not"}
	for _, n := range others {
		require.NoError(t, os.Mkdir(filepath.Join(parent, n), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(parent, "cccccccccccc"), nil, 0o600)) // not a directory
	require.NoError(t, os.Symlink(filepath.Dir(outside), filepath.Join(parent, "dddddddddddd")))
	require.NoError(t, os.Mkdir(filepath.Join(parent, tmpTrash+"eeeeeeeeeeee-1"), 0o700))     // a removal cut short
	require.NoError(t, os.WriteFile(filepath.Join(parent, ".ffffffffffff.lock"), nil, 0o600)) // its directory removed by hand

	month := time.Now().Add(tmpKeep + time.Hour)
	assert.Equal(t, []string{"aaaaaaaaaaaa"}, tidyTmpDirs(parent, month))
	assert.NoDirExists(t, old)
	assert.NoFileExists(t, filepath.Join(parent, ".aaaaaaaaaaaa.lock"))
	assert.NoFileExists(t, filepath.Join(parent, ".ffffffffffff.lock"))
	assert.FileExists(t, filepath.Join(parent, ".bbbbbbbbbbbb.lock"))
	assert.DirExists(t, filepath.Join(parent, "bbbbbbbbbbbb"), "held by a running launch")
	for _, n := range append(others, "cccccccccccc", "dddddddddddd") {
		_, err := os.Lstat(filepath.Join(parent, n))
		assert.NoError(t, err, n)
	}
	b, err := os.ReadFile(outside)
	require.NoError(t, err, "the tidy followed a sandbox's link")
	assert.Equal(t, "x", string(b))
	// The trash goes beside the launch.
	require.Eventually(t, func() bool {
		ents, _ := filepath.Glob(filepath.Join(parent, tmpTrash+"*"))
		return len(ents) == 0
	}, 10*time.Second, 10*time.Millisecond)

	assert.Nil(t, tidyTmpDirs(parent, month), "once a day")
	require.NoError(t, held.Close())
	assert.Equal(t, []string{"bbbbbbbbbbbb"}, tidyTmpDirs(parent, month.Add(tmpTidyEvery+time.Hour)), "released")
}

// TestTmpDirUse: a launch's touch keeps a TMPDIR a month from then, and a
// modification time set back inside the sandbox does not age it.
func TestTmpDirUse(t *testing.T) {
	defer func(b time.Duration) { tmpTidyBudget = b }(tmpTidyBudget)
	tmpTidyBudget = time.Hour // a loaded machine must not cut the tidy short
	parent := t.TempDir()
	dir := filepath.Join(parent, "aaaaaaaaaaaa")
	f, err := holdTmpDir(dir)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	past := time.Now().Add(-2 * tmpKeep)
	require.NoError(t, os.Chtimes(dir, past, past))
	assert.Nil(t, tidyTmpDirs(parent, time.Now().Add(tmpKeep-time.Hour)))
	assert.DirExists(t, dir)
}

// TestHoldTmpDirLeavesTheDirectory: the launcher's lock is a file beside
// the TMPDIR, not the directory: a program inside that locks its TMPDIR
// does not wait on its own launcher, and one that keeps it locked does not
// keep later launches waiting.
func TestHoldTmpDirLeavesTheDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "aaaaaaaaaaaa")
	f, err := holdTmpDir(dir)
	require.NoError(t, err)
	defer f.Close()
	g, err := os.Open(dir)
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, unix.Flock(int(g.Fd()), unix.LOCK_EX|unix.LOCK_NB), "the directory is locked by its launcher")
	h, err := holdTmpDir(dir)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	assert.Equal(t, filepath.Join(parent, ".aaaaaaaaaaaa.lock"), f.Name())
}
