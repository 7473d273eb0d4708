package detect

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// cacheFormat changes whenever the probe or this file's layout does, so
// an older cordon's verdict is never reused for a different probe.
const cacheFormat = 4 // 2: Result.BindFD; 3: Result.Landlock; 4: the landlock backend, the seccomp status in Policy

// cacheKey is everything a cached verdict depends on. Computing it costs a
// few stats and small reads, never an exec: it runs on every launch.
type cacheKey struct {
	Format  int    `json:"format"`
	Backend string `json:"backend"`
	UID     int    `json:"uid"`

	BinPath  string `json:"binPath"`
	BinSize  int64  `json:"binSize"`
	BinMtime int64  `json:"binMtimeNs"`
	BinCtime int64  `json:"binCtimeNs"` // moves on chmod/chown (setuid bit, owner)
	BinIno   uint64 `json:"binIno"`

	Kernel string `json:"kernel"` // uname release
	Boot   string `json:"boot"`   // boot id
	Policy string `json:"policy"` // sysctls, LSM revision, user namespace
}

type cacheEntry struct {
	Key    cacheKey `json:"key"`
	Result Result   `json:"result"`
}

// currentKey computes the key for backend b, or false when there is
// nothing to key on (no binary, no cache directory, wrong OS).
func currentKey(b string) (cacheKey, bool) {
	var bin string
	switch {
	case b == "bwrap" && runtime.GOOS == "linux":
		bin = findBwrap().path
	case (b == "native" || b == "landlock") && runtime.GOOS == "linux":
		bin = nativeBinary()
	case b == "seatbelt" && runtime.GOOS == "darwin":
		bin = sandboxExec
	}
	if bin == "" || cachePath(b) == "" {
		return cacheKey{}, false
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return cacheKey{}, false
	}
	k := cacheKey{
		Format: cacheFormat, Backend: b, UID: os.Getuid(),
		BinPath: bin, BinSize: fi.Size(), BinMtime: fi.ModTime().UnixNano(),
		Policy: policyID(),
	}
	k.BinIno, k.BinCtime = statID(fi)
	k.Kernel, k.Boot = kernelID()
	return k, true
}

// cachePath is detect-<b>.json in cordon's state directory, which every
// sandbox has denied (internal/state): a verdict a sandbox could edit would
// let it turn off the next launch's sandbox.
func cachePath(b string) string {
	return filepath.Join(state.Path(), "detect-"+b+".json")
}

// loadCache returns the cached verdict if its key equals k. Anything odd
// (missing, corrupt, foreign owner, other key) is a miss, never an error:
// the caller probes and rewrites the file.
func loadCache(b string, k cacheKey) (Result, bool) {
	f, err := os.Open(cachePath(b))
	if err != nil {
		return Result{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || checkOwner(f.Name(), fi, false, false) != nil {
		return Result{}, false // someone else could have planted this verdict
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return Result{}, false
	}
	var e cacheEntry
	// Nesting is never read from disk: it is decided live, from a sentinel
	// only a real enclosing sandbox can show (nested). A verdict that says
	// otherwise was not written by cordon; probe again.
	if json.Unmarshal(data, &e) != nil || e.Key != k || e.Result.Nested ||
		e.Result.Backend != b || e.Result.Path != k.BinPath || !e.Result.Usable {
		return Result{}, false
	}
	return e.Result, true
}

// storeCache writes a usable verdict atomically (temp file + rename, 0600).
// Unusable verdicts are not kept on disk: some fixes (an AppArmor profile,
// a container restart) leave the key unchanged, and a failing launch can
// afford the few milliseconds of a new probe. A stale entry is removed.
func storeCache(b string, k cacheKey, r Result) {
	name := cachePath(b)
	if !r.Usable || r.Nested {
		_ = os.Remove(name)
		return
	}
	data, err := json.MarshalIndent(cacheEntry{Key: k, Result: r}, "", "  ")
	if err != nil {
		return
	}
	dir, err := state.Dir()
	if err != nil || dir != filepath.Dir(name) {
		return // unwritable cache: detection still works, in process only
	}
	tmp, err := os.CreateTemp(dir, ".detect-"+b+"-*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o600) != nil || os.Rename(tmp.Name(), name) != nil {
		_ = os.Remove(tmp.Name())
	}
}
