package conformance

import (
	"io/fs"
	"os"
	"path/filepath"
)

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// removeAll removes p, opening up the directories in it that are not
// writable first (Go's module cache makes them 0555): a fixture's own
// tree, which nothing else writes meanwhile.
func removeAll(p string) {
	if os.RemoveAll(p) == nil {
		return
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	os.RemoveAll(p)
}

func restore(a, b string) { os.RemoveAll(b); os.Rename(a, b) }

// RemoveFixture removes dir, a fixture or a run's base. What a case left
// closed (a directory a sandbox made mode 000 or 0555, and the case ended
// before it opened it again) stops a RemoveAll by a user without root's
// override; it is opened (0700, a directory at a time, before its
// entries are read) and the removal tried again. Nothing is followed:
// the walk does not enter links.
func RemoveFixture(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, werr error) error {
		if d != nil && d.IsDir() && werr == nil {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
