//go:build !linux

package boundedread

import (
	"os"

	"golang.org/x/sys/unix"
)

// openForRead opens name for reading as File needs: without
// waiting for a writer (a FIFO), without making it the controlling
// terminal, and through a symbolic link only to what was a regular file
// a moment before (see readfile_linux.go).
func openForRead(name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	fd, err := unix.Open(name, flags|unix.O_NOFOLLOW, 0)
	if err != unix.ELOOP {
		return fd, err
	}
	if fi, err := os.Stat(name); err != nil {
		return -1, err
	} else if !fi.Mode().IsRegular() {
		return -1, ErrNotRegular
	}
	return unix.Open(name, flags, 0)
}
