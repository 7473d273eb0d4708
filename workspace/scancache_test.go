package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

func paths(ps []gitPlace) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return out
}

func TestScanCache(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // the fixture is seconds old at most
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "lib", ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "b", "c"), 0o755))

	first, cut := cachedScan(ws, cache)
	require.False(t, cut)
	require.Equal(t, []string{filepath.Join(ws, "a", "lib")}, paths(first))
	ents := records(cache)
	require.Len(t, ents, 1, "the scan was recorded")

	// A hit: the record holds, whatever it says.
	file := filepath.Join(cache, ents[0])
	rec, ok := loadScan(file, ws)
	require.True(t, ok)
	require.Equal(t, first, rec.Places)

	// A new repository deep down changes its parent's ctime: a miss.
	newRepo := filepath.Join(ws, "b", "c", "vendored")
	require.NoError(t, os.MkdirAll(filepath.Join(newRepo, ".git"), 0o755))
	_, ok = loadScan(file, ws)
	require.False(t, ok)
	again, _ := cachedScan(ws, cache)
	require.ElementsMatch(t, []string{filepath.Join(ws, "a", "lib"), newRepo}, paths(again))

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

func TestScanCacheDoesNotTrustRacyScans(t *testing.T) {
	ws := t.TempDir() // just made: every ctime is within the racy window
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "x", ".git"), 0o755))
	cachedScan(ws, cache)
	ents := records(cache)
	require.Len(t, ents, 1, "what it found is remembered")
	_, current := loadScan(filepath.Join(cache, ents[0]), ws)
	require.False(t, current, "a scan of directories changed moments ago is not taken as current")
}

// A scan cut short by its bounds keeps every repository seen before: a
// sandbox that fills the workspace with directories does not unprotect a
// nested repository (docs/threat-model.md, class 11).
func TestScanBoundKeepsKnownRepositories(t *testing.T) {
	defer func(n int) { scanDirs = n }(scanDirs)
	scanDirs = 200 // the same at any size; the fixture stays small
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	lib := filepath.Join(ws, "third_party", "x", "lib") // read after every level-2 directory
	require.NoError(t, os.MkdirAll(filepath.Join(lib, ".git"), 0o755))
	first, cut := cachedScan(ws, cache)
	require.False(t, cut)
	require.Equal(t, []string{lib}, paths(first))

	// Directories read before third_party's children use up the budget.
	for i := 0; i < scanDirs; i++ {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a-junk", "d"+strconv.Itoa(i)), 0o755))
	}
	scanned, _, cut := scanGit(ws, nil)
	require.True(t, cut)
	require.NotContains(t, paths(scanned), lib, "the fixture hides the repository from a fresh scan")
	got, cut := cachedScan(ws, cache)
	require.True(t, cut)
	require.Contains(t, paths(got), lib, "known before, kept")

	// Gone for real: not kept.
	require.NoError(t, os.RemoveAll(lib))
	got, _ = cachedScan(ws, cache)
	require.NotContains(t, paths(got), lib)
}

// Many files cost no directory read: they cannot push a repository past
// the bound.
func TestScanBoundCountsDirectories(t *testing.T) {
	defer func(n int) { scanDirs = n }(scanDirs)
	scanDirs = 200
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	junk := filepath.Join(ws, "a-build")
	require.NoError(t, os.MkdirAll(junk, 0o755))
	for i := 0; i < scanDirs+1; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(junk, "f"+strconv.Itoa(i)), nil, 0o644))
	}
	lib := filepath.Join(ws, "z", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, ".git"), 0o755))
	got, _, cut := scanGit(ws, nil)
	require.False(t, cut)
	require.Equal(t, []string{lib}, paths(got))
}

// A scan after a change reads again only the directories whose stamp
// moved; the others answer from the record.
func TestScanRereadsOnlyChangedDirectories(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0
	defer func() { scanRead = nil }()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	for i := range 50 {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "p", "d"+strconv.Itoa(i), "src"), 0o755))
	}
	lib := filepath.Join(ws, "p", "d7", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, ".git"), 0o755))
	var reads []string
	scanRead = func(dir string) { reads = append(reads, dir) }
	first, _ := cachedScan(ws, cache)
	require.Equal(t, []string{lib}, paths(first))
	require.Greater(t, len(reads), 100)

	reads = nil
	again, _ := cachedScan(ws, cache)
	require.Equal(t, []string{lib}, paths(again))
	require.Empty(t, reads, "nothing changed: stats only")

	// A new repository in one directory: that directory, and the new
	// ones below it, are read; nothing else.
	sub := filepath.Join(ws, "p", "d30", "src")
	newRepo := filepath.Join(sub, "vendored")
	require.NoError(t, os.MkdirAll(filepath.Join(newRepo, ".git"), 0o755))
	reads = nil
	got, _ := cachedScan(ws, cache)
	require.ElementsMatch(t, []string{lib, newRepo}, paths(got))
	require.ElementsMatch(t, []string{sub, newRepo}, reads)

	// A directory swapped for another (a new inode) is read again, even
	// with its names unchanged.
	d7 := filepath.Join(ws, "p", "d7")
	require.NoError(t, os.Rename(d7, d7+".old"))
	require.NoError(t, os.MkdirAll(filepath.Join(d7, "lib"), 0o755)) // no .git now
	reads = nil
	got, _ = cachedScan(ws, cache)
	require.ElementsMatch(t, []string{newRepo, filepath.Join(d7+".old", "lib")}, paths(got))
	require.Contains(t, reads, d7)
}

// A scan cut short leaves a record the next one starts from: launch by
// launch the scan reaches the whole workspace and becomes current.
func TestScanCutShortMakesProgress(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0
	defer func(n int) { scanDirs = n }(scanDirs)
	scanDirs = 100
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	for i := range 250 {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "d"+strconv.Itoa(i)), 0o755))
	}
	lib := filepath.Join(ws, "z", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, ".git"), 0o755))
	_, cut := cachedScan(ws, cache)
	require.True(t, cut)
	var got []gitPlace
	for range 5 {
		if got, cut = cachedScan(ws, cache); !cut {
			break
		}
	}
	require.False(t, cut, "the scan never got past its bound")
	require.Equal(t, []string{lib}, paths(got))
	ents := records(cache)
	_, current := loadScan(filepath.Join(cache, ents[0]), ws)
	require.True(t, current)
}

// The git guard answers from the scan what a work tree holds (its
// .gitmodules and hook configurations) and guards many repositories in
// parallel; the roots it derives are the same as looking each up, cold,
// warm and after a change.
func TestGuardAnswersFromTheScan(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	repo := func(i int) string { return filepath.Join(ws, "p"+strconv.Itoa(i/50), "r"+strconv.Itoa(i)) }
	for i := range 150 {
		require.NoError(t, os.MkdirAll(filepath.Join(repo(i), ".git"), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo(3), ".pre-commit-config.yaml"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo(140), ".gitmodules"), []byte("[submodule \"s\"]\n\tpath = sub\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(repo(140), "sub", ".git"), 0o755))

	derived := func(cache string, workers int) []string {
		defer func(n int) { guardWorkers = n }(guardWorkers)
		guardWorkers = workers
		p, err := Preset(ws, Options{ScanCache: cache})
		require.NoError(t, err)
		d := slices.Clone(p.Derived())
		slices.Sort(d)
		return slices.Compact(d)
	}
	want := derived("", 1) // no record, one guard: every name looked up
	require.Contains(t, want, filepath.Join(repo(3), ".pre-commit-config.yaml"))
	require.Contains(t, want, filepath.Join(repo(140), "sub", ".git"))
	require.NotContains(t, want, filepath.Join(repo(4), ".pre-commit-config.yaml"))
	require.Equal(t, want, derived("", 2), "guarded in parallel")
	require.Equal(t, want, derived(cache, 2), "cold record")
	require.Equal(t, want, derived(cache, 2), "warm record")

	// A hook configuration added since: its directory's stamp moved, so
	// the scan reads it again and the guard protects the new file.
	husky := filepath.Join(repo(50), ".husky")
	require.NoError(t, os.Mkdir(husky, 0o755))
	got := derived(cache, 2)
	require.Contains(t, got, husky)
	require.Equal(t, derived("", 1), got)
}

// TestScanRecordEncoding: a record comes back as it went in, whatever its
// paths hold but NUL; a cut, a count larger than the record, another
// version or trailing bytes read as no record (a rescan), never as
// another one.
func TestScanRecordEncoding(t *testing.T) {
	rec := scanRecord{V: scanVersion, Root: "/w s/new\nline", Complete: true,
		Places: []gitPlace{{Path: "/w s/new\nline/a", Has: hasKnown | 3}, {Path: "/w s/é/.git", Gitdir: true}, {Path: "/w s/new\nline/a", Conf: 1<<len(NestedNames) - 1}, {Path: "/w s/wide", Wide: true}},
		Dirs: []dirRecord{
			{Path: "/w s/new\nline", stamp: stamp{Ino: 1<<64 - 1, Ctime: 1796143666658488214}, Subdirs: []string{"a", "b c"}},
			{Path: "/w s/new\nline/a", stamp: stamp{Ino: 7, Ctime: 1}, Shape: shapeWorkTree, Has: 5, Conf: 9},
			{Path: "/w s/é/.git", Shape: shapeGitdir},
			{Path: "/w s/wide", Shape: shapeWide},
		}}
	b := encodeScan(rec)
	got, ok := decodeScan(b)
	require.True(t, ok)
	require.Equal(t, rec, got)

	empty, ok := decodeScan(encodeScan(scanRecord{V: scanVersion, Root: "/x"}))
	require.True(t, ok)
	require.Equal(t, scanRecord{V: scanVersion, Root: "/x"}, empty)

	for name, bad := range map[string][]byte{
		"cut":         b[:len(b)-1],
		"trailing":    append(append([]byte(nil), b...), "x\x00"...),
		"version":     []byte(strings.Replace(string(b), "cordon-scan 10", "cordon-scan 9", 1)),
		"huge count":  []byte("cordon-scan 10\n/x\x001\x009999999999\x000\x00"),
		"json":        []byte(`{"v":9,"root":"/x"}`),
		"bad number":  []byte("cordon-scan 10\n/x\x00yes\x000\x000\x00"),
		"bad subdirs": []byte("cordon-scan 10\n/x\x001\x000\x001\x00/x\x001\x001\x000\x000\x000\x003\x00a\x00"),
	} {
		_, ok := decodeScan(bad)
		require.False(t, ok, name)
	}
}

// records are the names of the scan's records in cache (beside them, the
// tidy's stamp).
func records(cache string) []string {
	ents, _ := filepath.Glob(filepath.Join(cache, "*.scan"))
	for i, e := range ents {
		ents[i] = filepath.Base(e)
	}
	return ents
}

// A directory a sandbox filled with subdirectories (issue 39.9, at a
// bound of 8 here, scanWide in production) is neither listed whole nor
// entered: it is protected whole, a repository planted inside it
// included, while a directory at the bound is entered as before. A later
// launch spends a stat on it while it is unchanged, and the record keeps
// none of its names.
func TestScanWideDirectoryIsProtectedWhole(t *testing.T) {
	defer func(w time.Duration, n int) { racyWindow, scanWide = w, n }(racyWindow, scanWide)
	racyWindow, scanWide = 0, 8
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	wide, narrow := filepath.Join(ws, "wide"), filepath.Join(ws, "narrow")
	for i := range scanWide + 1 {
		require.NoError(t, os.MkdirAll(filepath.Join(wide, strings.Repeat("n", 200)+strconv.Itoa(i)), 0o755))
	}
	planted := filepath.Join(wide, strings.Repeat("n", 200)+"3")
	require.NoError(t, os.MkdirAll(filepath.Join(planted, ".git", "hooks"), 0o755))
	for i := range scanWide {
		require.NoError(t, os.MkdirAll(filepath.Join(narrow, "d"+strconv.Itoa(i)), 0o755))
	}
	lib := filepath.Join(narrow, "d2")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, ".git"), 0o755))

	var reads []string
	scanRead = func(dir string) { reads = append(reads, dir) }
	defer func() { scanRead = nil }()
	p, err := Preset(ws, Options{ScanCache: cache})
	require.NoError(t, err)
	require.Contains(t, p.Derived(), wide, "the wide directory is read-only whole")
	require.NotContains(t, p.Derived(), narrow)
	require.Contains(t, p.Derived(), filepath.Join(lib, ".git"), "a repository beside it is guarded as ever")
	for _, r := range reads {
		require.False(t, within(r, wide) && r != wide, "entered %s", r)
	}
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	require.Contains(t, strings.Join(c.Notes(), "\n"), wide+" has more than 8 subdirectories")

	// The record holds no name from inside it, and a later launch only
	// stats it.
	ents := records(cache)
	require.Len(t, ents, 1)
	b, err := os.ReadFile(filepath.Join(cache, ents[0]))
	require.NoError(t, err)
	require.NotContains(t, string(b), strings.Repeat("n", 200))
	reads = nil
	p, err = Preset(ws, Options{ScanCache: cache})
	require.NoError(t, err)
	require.Contains(t, p.Derived(), wide)
	require.NotContains(t, reads, wide)

	// Emptied to the bound: entered again, and the planted repository is
	// guarded as one.
	require.NoError(t, os.Remove(filepath.Join(wide, strings.Repeat("n", 200)+"0")))
	p, err = Preset(ws, Options{ScanCache: cache})
	require.NoError(t, err)
	require.NotContains(t, p.Derived(), wide)
	require.Contains(t, p.Derived(), filepath.Join(planted, ".git"))
}

// A record over its cap is written without the directories it knows (a
// later scan reads them again), never with fewer places; one over the
// cap is not read back.
func TestScanRecordIsCapped(t *testing.T) {
	defer func(n int) { scanRecordMax = n }(scanRecordMax)
	dir := t.TempDir()
	file := filepath.Join(dir, "r.scan")
	rec := scanRecord{V: scanVersion, Root: "/w", Complete: true, Places: []gitPlace{{Path: "/w/a"}}}
	for i := range 1000 {
		rec.Dirs = append(rec.Dirs, dirRecord{Path: "/w/" + strings.Repeat("d", 100) + strconv.Itoa(i)})
	}
	scanRecordMax = 4096
	storeScan(dir, file, rec)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.LessOrEqual(t, len(b), scanRecordMax)
	got, current := loadScan(file, "/w")
	require.False(t, current, "no longer complete")
	require.Equal(t, rec.Places, got.Places)
	require.Less(t, len(got.Dirs), len(rec.Dirs))

	require.NoError(t, os.WriteFile(file, append(b, make([]byte, scanRecordMax)...), 0o600))
	got, _ = loadScan(file, "/w")
	require.Empty(t, got.Places, "a record over the cap is not read")
}
