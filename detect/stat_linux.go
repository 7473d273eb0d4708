package detect

import (
	"os"
	"strings"
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
	return st.Ino, st.Ctim.Nano()
}

// readTrim returns a small file's trimmed contents, "" if unreadable. It
// bypasses os.ReadFile's poller registration: on a warm launch these
// /proc reads are most of detection's cost.
func readTrim(name string) string {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	var buf [256]byte
	n, err := syscall.Read(fd, buf[:])
	if err != nil || n < 0 {
		return ""
	}
	return strings.TrimSpace(string(buf[:n]))
}
