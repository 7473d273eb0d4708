package workspace

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// The scan's records (scancache.go, guardcache.go) are kept per writable
// root, for as long as that root is there: a harness that gives each
// subagent a fresh worktree leaves one record per worktree, and a record
// of a large tree weighs megabytes. Once a day a launch's scan removes the
// records no launch has used for recordKeep (each launch that reads one
// touches it) whose root no longer exists, records of another format
// (no launch reads them), and temporary files a killed write left.
//
// A record is the scan's memory (a repository once found stays protected
// while it is there, whatever a cut scan sees), so one of a root that is
// only missing for a moment must not go: a sandbox that can rename a
// workspace away can do so while a tidy runs. The month of disuse stands
// for that: what a launch used within it stays, and a root unused for a
// month starts again from a full scan, as at its first launch.
var (
	recordKeep       = 30 * 24 * time.Hour
	recordTidyEvery  = 24 * time.Hour
	recordTmpKeep    = 24 * time.Hour
	recordTidyMax    = 10000
	recordHeadLength = 8192 // the header and a root path of PATH_MAX
	// recordTidyBudget bounds the time a tidy adds to the launch that
	// runs it.
	recordTidyBudget = 100 * time.Millisecond
	rootLookLimit    = 20 * time.Millisecond
)

// tidyRecords removes what dir (the scan's directory) no longer needs,
// unless a tidy ran there within recordTidyEvery before now. It returns
// the names it removed.
func tidyRecords(dir string, now time.Time) []string {
	if !state.Due(dir, now, recordTidyEvery) {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(recordTidyMax)
	d.Close()
	var gone []string
	end := time.Now().Add(recordTidyBudget)
	remove := func(n string) {
		if os.Remove(filepath.Join(dir, n)) == nil {
			gone = append(gone, n)
		}
	}
	for _, n := range names {
		if time.Now().After(end) {
			break // the rest at the next tidy
		}
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		age := now.Sub(fi.ModTime())
		switch {
		case strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp"):
			if age > recordTmpKeep {
				remove(n)
			}
		case strings.HasSuffix(n, ".scan"):
			if age > recordKeep && !recordRootHere(filepath.Join(dir, n)) {
				remove(n)
				if _, err := os.Lstat(filepath.Join(dir, strings.TrimSuffix(n, ".scan")+".guard")); err == nil {
					remove(strings.TrimSuffix(n, ".scan") + ".guard")
				}
			}
		case strings.HasSuffix(n, ".guard"), strings.HasSuffix(n, ".json"):
			// A guard's record without the scan's (its root unknown), or
			// version 4's record in JSON.
			if _, err := os.Lstat(filepath.Join(dir, strings.TrimSuffix(strings.TrimSuffix(n, ".guard"), ".json")+".scan")); age > recordKeep && os.IsNotExist(err) {
				remove(n)
			}
		}
	}
	return gone
}

// recordRootHere reports whether the scan record in file is of this
// version and names a root that still exists (or might: any answer but
// "no such file" keeps it).
func recordRootHere(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return true
	}
	b, _ := io.ReadAll(io.LimitReader(f, int64(recordHeadLength)))
	f.Close()
	r := readRecord(b, scanHeader())
	if r == nil {
		return false // another format: no launch reads it
	}
	root := r.str()
	if r.bad || !strings.HasPrefix(root, "/") {
		return false
	}
	return rootExists(root)
}

// rootExists reports whether root exists, or might: a root on a network
// file system that no longer answers must not hold the launch that runs
// the tidy, so a look that takes longer than rootLookLimit counts as
// "there" (the look itself ends when the file system answers).
func rootExists(root string) bool {
	done := make(chan error, 1)
	go func() {
		_, err := os.Lstat(root)
		done <- err
	}()
	select {
	case err := <-done:
		return !os.IsNotExist(err)
	case <-time.After(rootLookLimit):
		return true
	}
}
