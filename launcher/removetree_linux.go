package launcher

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// removeTree removes dir and what is in it, also where a directory in it
// is not writable: Go's module cache makes every directory 0555, and a
// sandbox may close one of its own. Such a directory is opened again for
// writing through its parent's descriptor, never following a link, down
// to removeDepth levels; what lies deeper stays for a later tidy.
func removeTree(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	openUp(fd, removeDepth)
	unix.Close(fd)
	os.RemoveAll(dir)
}

const removeDepth = 64

// openUp gives the directory fd, and each directory below it to depth
// levels, its owner's write and search permission.
func openUp(fd, depth int) {
	unix.Fchmod(fd, 0o700)
	if depth == 0 {
		return
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(dup), "")
	defer d.Close()
	ents, _ := d.ReadDir(tmpTidyMax)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EACCES) && chmodAt(fd, e.Name()) == nil {
			sub, err = unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err != nil {
			continue
		}
		openUp(sub, depth-1)
		unix.Close(sub)
	}
}

// chmodAt gives the directory name in dirfd its owner's permissions,
// without opening it for reading (it may be closed) and without following
// a link: through an O_PATH descriptor, as the C library's fchmodat does
// for AT_SYMLINK_NOFOLLOW.
func chmodAt(dirfd int, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), 0o700)
}
