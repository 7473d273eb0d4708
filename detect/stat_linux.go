package detect

import (
	"strings"
	"syscall"
)

func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

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
