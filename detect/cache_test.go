package detect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

func TestCachePath(t *testing.T) {
	// The place never follows XDG_CACHE_HOME or HOME, which differ between
	// launches and which a sandbox may own.
	t.Setenv(state.EnvDir, "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	t.Setenv("HOME", "/home/u")
	require.Equal(t, filepath.Join(state.Path(), "detect-bwrap.json"), cachePath("bwrap"))
	require.NotContains(t, cachePath("bwrap"), "/x/cache")

	t.Setenv(state.EnvDir, "/s/cordon")
	require.Equal(t, "/s/cordon/detect-bwrap.json", cachePath("bwrap"))
}

func TestCacheNeverSaysNested(t *testing.T) {
	t.Setenv(state.EnvDir, filepath.Join(t.TempDir(), "state"))
	k := cacheKey{Format: cacheFormat, Backend: "bwrap", UID: os.Getuid(), BinPath: "/usr/bin/bwrap"}
	nested := Result{Backend: "bwrap", Path: "/usr/bin/bwrap", Usable: true, Nested: true}
	storeCache("bwrap", k, nested)
	_, err := os.Stat(cachePath("bwrap"))
	require.ErrorIs(t, err, os.ErrNotExist, "a nested verdict was written")

	// A planted verdict saying "nested" is a miss: the caller probes.
	data, err := json.Marshal(cacheEntry{Key: k, Result: nested})
	require.NoError(t, err)
	_, err = state.Dir()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cachePath("bwrap"), data, 0o600))
	_, hit := loadCache("bwrap", k)
	require.False(t, hit)
}

func TestCacheRoundTrip(t *testing.T) {
	t.Setenv(state.EnvDir, filepath.Join(t.TempDir(), "state"))
	name := cachePath("bwrap")
	k := cacheKey{Format: cacheFormat, Backend: "bwrap", UID: os.Getuid(), BinPath: "/usr/bin/bwrap",
		BinSize: 72080, BinMtime: 1, BinCtime: 2, BinIno: 3, Kernel: "6.8.0", Boot: "b", Policy: "p"}
	ok := Result{Backend: "bwrap", Path: "/usr/bin/bwrap", Version: "0.8.0", Usable: true, Reason: "ok: test"}

	storeCache("bwrap", k, ok)
	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	got, hit := loadCache("bwrap", k)
	require.True(t, hit)
	require.Equal(t, ok, got)

	// Every element of the key invalidates on its own.
	changes := map[string]func(*cacheKey){
		"format": func(k *cacheKey) { k.Format++ }, "uid": func(k *cacheKey) { k.UID++ },
		"path": func(k *cacheKey) { k.BinPath = "/bin/bwrap" }, "size": func(k *cacheKey) { k.BinSize++ },
		"mtime": func(k *cacheKey) { k.BinMtime++ }, "ctime": func(k *cacheKey) { k.BinCtime++ },
		"inode": func(k *cacheKey) { k.BinIno++ }, "kernel": func(k *cacheKey) { k.Kernel = "6.9.0" },
		"boot": func(k *cacheKey) { k.Boot = "other" }, "sysctls": func(k *cacheKey) { k.Policy = "q" },
	}
	for what, change := range changes {
		k2 := k
		change(&k2)
		_, hit := loadCache("bwrap", k2)
		require.False(t, hit, "changed %s but the cache still hit", what)
	}

	require.NoError(t, os.WriteFile(name, []byte("{not json"), 0o600))
	_, hit = loadCache("bwrap", k)
	require.False(t, hit, "corrupt file must be a miss")

	storeCache("bwrap", k, ok)
	require.NoError(t, os.Chmod(name, 0o666))
	_, hit = loadCache("bwrap", k)
	require.False(t, hit, "a verdict others could have written must be a miss")

	storeCache("bwrap", k, Result{Backend: "bwrap", Reason: "broken; fix: x"})
	_, err = os.Stat(name)
	require.ErrorIs(t, err, os.ErrNotExist, "an unusable verdict removes the stale entry")

	entries, err := os.ReadDir(filepath.Dir(name))
	require.NoError(t, err)
	require.Empty(t, entries, "no temp files left behind")

	// A verdict naming another binary than its key is not believed.
	forged, err := json.Marshal(cacheEntry{Key: k, Result: Result{Backend: "bwrap", Path: "/tmp/evil", Usable: true}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(name, forged, 0o600))
	_, hit = loadCache("bwrap", k)
	require.False(t, hit)
}
