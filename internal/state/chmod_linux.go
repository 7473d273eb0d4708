package state

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// chmodNoFollow sets dir to 0700 if it is still the directory fi
// describes. O_PATH opens it even when its mode is 000; the chmod goes
// through the descriptor's /proc link, which names the inode, not a path.
func chmodNoFollow(dir string, fi fs.FileInfo) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if ino, dev := statIDs(fi); st.Ino != ino || uint64(st.Dev) != dev {
		return errors.New("it changed while cordon looked at it")
	}
	return os.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700)
}

// statIDs returns fi's inode and device.
func statIDs(fi fs.FileInfo) (ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), uint64(st.Dev)
	}
	return 0, 0
}
