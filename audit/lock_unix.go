//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// lock takes the log's lock, exclusive for appends, shared for a verify
// (which must not see a record without its anchor).
func lock(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	return unix.Flock(int(f.Fd()), how)
}

func unlock(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
