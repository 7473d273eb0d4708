package policy

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScanCache(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // the fixture is seconds old at most
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "lib", ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "b", "c"), 0o755))

	first := cachedNestedRepos(ws, cache)
	require.Equal(t, []string{filepath.Join(ws, "a", "lib")}, first)
	ents, _ := os.ReadDir(cache)
	require.Len(t, ents, 1, "the scan was recorded")

	// A hit: the record holds, whatever it says.
	file := filepath.Join(cache, ents[0].Name())
	rec, ok := loadScan(file, ws)
	require.True(t, ok)
	require.Equal(t, first, rec.Repos)

	// A new repository deep down changes its parent's ctime: a miss.
	newRepo := filepath.Join(ws, "b", "c", "vendored")
	require.NoError(t, os.MkdirAll(filepath.Join(newRepo, ".git"), 0o755))
	_, ok = loadScan(file, ws)
	require.False(t, ok)
	require.ElementsMatch(t, []string{filepath.Join(ws, "a", "lib"), newRepo}, cachedNestedRepos(ws, cache))

	// Setting the mtime back, as a sandbox could, does not restore a hit:
	// ctime moved.
	old := time.Now().Add(-time.Hour)
	_, ok = loadScan(file, ws)
	require.True(t, ok, "re-recorded after the rescan")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "b", "c", "other"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "b", "c", "other", ".git"), 0o755))
	require.NoError(t, os.Chtimes(filepath.Join(ws, "b", "c"), old, old))
	_, ok = loadScan(file, ws)
	require.False(t, ok)
}

func TestScanCacheSkipsRacyScans(t *testing.T) {
	ws := t.TempDir() // just made: every ctime is within the racy window
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "x", ".git"), 0o755))
	cachedNestedRepos(ws, cache)
	ents, _ := os.ReadDir(cache)
	require.Empty(t, ents, "a scan of directories changed moments ago is not kept")
}
