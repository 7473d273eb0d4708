//go:build linux || darwin

package detect

import (
	"os"
	"syscall"
)

// statOwner returns fi's owner uid.
func statOwner(fi os.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// statID returns the inode and change time (ns) of fi; ctime moves on
// chmod/chown too, so a setuid bit or owner change invalidates the cache.
func statID(fi os.FileInfo) (ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ino, ctimeNano(st)
}
