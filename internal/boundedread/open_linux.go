package boundedread

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// openForRead opens name for reading as File needs: without
// waiting for a writer (a FIFO), without making it the controlling
// terminal, and through a symbolic link only to a regular file. A
// sandbox can plant a link to a device where cordon reads, and open(2) of
// some devices acts (a watchdog starts counting down): the link's target
// is opened O_PATH, which does not open the device, and checked first.
func openForRead(name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	fd, err := unix.Open(name, flags|unix.O_NOFOLLOW, 0)
	if err != unix.ELOOP {
		return fd, err
	}
	pfd, err := unix.Open(name, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return -1, ErrNotRegular
	}
	// The file the link led to, whatever the link says by now.
	fd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags, 0)
	if err == unix.ENOENT {
		// No /proc on this host: by the link, checked a moment ago. A
		// read that failed instead would drop what the file names.
		return unix.Open(name, flags, 0)
	}
	return fd, err
}
