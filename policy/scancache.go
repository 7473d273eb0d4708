package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// The scan for nested git repositories reads up to scanEntries entries on
// every launch, milliseconds on a large workspace. Its result depends only
// on the names in the directories it read, so it is kept with the stamp
// (inode and ctime) of each: while every stamp still matches, no entry was
// added, removed or renamed in any of them, and the result stands. A stat
// per directory replaces an open, a read and a close of it.
//
// A sandbox cannot forge a ctime, and cannot write the cache (it lives in
// cordon's runtime directory, read-only in every sandbox). A directory
// changed within racyWindow of the scan could have changed within the same
// clock tick as its recorded ctime, so such a scan is not kept.
var racyWindow = 2 * time.Second

type scanRecord struct {
	Root  string     `json:"root"`
	Repos []string   `json:"repos"`
	Read  []dirStamp `json:"read"`
}

// cachedNestedRepos is nestedRepos, answered from dir when the recorded
// scan of root still holds. dir "" means no cache.
func cachedNestedRepos(root, dir string) []string {
	if dir == "" {
		repos, _ := nestedRepos(root)
		return repos
	}
	sum := sha256.Sum256([]byte(root))
	file := filepath.Join(dir, hex.EncodeToString(sum[:12])+".json")
	if rec, ok := loadScan(file, root); ok {
		return rec.Repos
	}
	start := time.Now()
	repos, read := nestedRepos(root)
	for _, d := range read {
		if start.Sub(time.Unix(0, d.Ctime)) < racyWindow {
			return repos // too fresh to trust a stamp; scan again next time
		}
	}
	storeScan(dir, file, scanRecord{Root: root, Repos: repos, Read: read})
	return repos
}

func loadScan(file, root string) (scanRecord, bool) {
	var rec scanRecord
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Root != root || len(rec.Read) == 0 {
		return rec, false
	}
	for _, d := range rec.Read {
		fi, err := os.Lstat(d.Path)
		if err != nil || !fi.IsDir() || stampOf(fi) != d.stamp {
			return rec, false
		}
	}
	return rec, true
}

// storeScan writes the record atomically; a failure only costs a rescan.
func storeScan(dir, file string, rec scanRecord) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, "scan-*.tmp")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(tmp.Name(), file) != nil {
		os.Remove(tmp.Name())
	}
}
