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
