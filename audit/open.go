package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A log the user names may lie where a sandbox can write (a workspace,
// a HOME inside one). Between two appends the sandbox can replace the log,
// its anchor, or any directory above them with a symlink to a file it may
// not write (~/.bashrc), and the next append would land there. So a named
// log is reached one component at a time from /, each opened relative to
// the one before with O_NOFOLLOW: the kernel refuses a symlink anywhere on
// the way at the moment of the open, and once a directory is open, what is
// renamed around it no longer matters (docs/threat-model.md, class 11).

// ErrSymlink is wrapped by the error for a log path with a symlink in it.
var ErrSymlink = errors.New("symlink in the path")

// openDir opens the absolute directory dir without following a symlink at
// any component. With create, missing components are made (mode 0700,
// the trail is private).
func openDir(dir string, create bool) (*os.File, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("open %s: not an absolute path", dir)
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	cur := "/"
	for _, c := range strings.Split(filepath.Clean(dir), "/") {
		if c == "" {
			continue
		}
		next := filepath.Join(cur, c)
		nfd, err := openDirAt(fd, c)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, c, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
				nfd, err = openDirAt(fd, c)
			}
		}
		if err != nil {
			err = describe(fd, c, next, err)
			unix.Close(fd)
			return nil, err
		}
		unix.Close(fd)
		fd, cur = nfd, next
	}
	return os.NewFile(uintptr(fd), cur), nil
}

func openDirAt(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// describe turns an open error at dirfd/name into one that says what is
// there, naming path; a symlink wraps ErrSymlink and says what the real
// path would be.
func describe(dirfd int, name, path string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		msg := fmt.Sprintf("%s is a symlink; cordon opens audit logs and keys only by their real path, never through a link", path)
		if real, rerr := filepath.EvalSymlinks(path); rerr == nil {
			msg += " (here: " + real + ")"
		}
		return fmt.Errorf("%s: %w", msg, ErrSymlink)
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// linkErr is the error of opening a final component with O_NOFOLLOW:
// ELOOP there means a symlink.
func linkErr(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("it is a symlink: %w", ErrSymlink)
	}
	return err
}

// Access modes of openAt.
const (
	rdonly     = unix.O_RDONLY
	rdwr       = unix.O_RDWR
	appendMode = unix.O_RDWR | unix.O_APPEND
)

// openAt opens name in dir with mode (rdonly, rdwr, appendMode), without
// following a symlink and without blocking on a FIFO or taking a
// terminal, creating it (0600, only if absent) with create.
func openAt(dir *os.File, name string, mode int, create bool) (*os.File, error) {
	path := filepath.Join(dir.Name(), name)
	flag := mode | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	fd, err := unix.Openat(int(dir.Fd()), name, flag, 0)
	if errors.Is(err, unix.ENOENT) && create {
		fd, err = unix.Openat(int(dir.Fd()), name, flag|unix.O_CREAT|unix.O_EXCL, 0o600)
		if errors.Is(err, unix.EEXIST) { // another process made it first
			fd, err = unix.Openat(int(dir.Fd()), name, flag, 0)
		}
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, describe(int(dir.Fd()), name, path, err)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// checkFile requires f to be a regular file; mine also requires it to be
// the current user's with one link (a second name may be a file the user
// never meant cordon to write).
func checkFile(f *os.File, mine bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	case mine && st.Nlink != 1:
		return fmt.Errorf("%s has %d hard links; cordon writes only a file with one name", f.Name(), st.Nlink)
	case mine && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", f.Name(), st.Uid, os.Geteuid())
	}
	return nil
}

const nofollow = unix.O_NOFOLLOW
