//go:build unix

package permission

import (
	"os"
	"syscall"
)

// extraNames returns how many other hard links the regular file p has
// (0 when it does not exist or is not a regular file).
func extraNames(p string) uint64 {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) > 1 {
		return uint64(st.Nlink) - 1
	}
	return 0
}
