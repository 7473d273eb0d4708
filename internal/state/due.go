package state

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Due reports whether a job run at most once per every in dir (a tidy of
// its entries) is due at now, and if so marks it run then: a stamp file
// (.tidied) whose modification time is the last run. A stamp that cannot
// be written makes the job not due, so a read-only state directory (inside
// a sandbox) runs no tidy.
func Due(dir string, now time.Time, every time.Duration) bool {
	stamp := filepath.Join(dir, ".tidied")
	if fi, err := os.Lstat(stamp); err == nil && now.Sub(fi.ModTime()) < every {
		return false
	}
	f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return os.Chtimes(stamp, now, now) == nil
}
