package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 is known to be missing (Linux before 5.6,
// or a seccomp profile that refuses it): lookups then go by path.
var noOpenat2 atomic.Bool

// errSwapped is the cause of an error for a path whose parent, found free
// of links a moment earlier, has a symbolic link on its way now.
var errSwapped = errors.New("a directory on its way is now a symbolic link, swapped in while the policy was being resolved; refusing rather than looking through it")

// lookupEntry describes the entry p (absolute and clean) as lstat would,
// from its parent directory opened without following a symbolic link on
// the way (openat2 RESOLVE_NO_SYMLINKS). resolveVia has found that parent
// free of links a moment ago; a link there now was swapped in since, and
// os.Lstat would look through it and describe what it points at as if it
// were at p (a sandbox exchanging ws/d with a link to ~/x made ws/d/y look
// like an existing directory that was ~/x/y). That is errSwapped instead.
//
// The parent comes from dirs (nil: opened by path and closed): a
// directory it already holds open, or one reached from the deepest it
// holds above it one name at a time, each without following a link.
func lookupEntry(p string, dirs *dirChain) (linkInfo, error) {
	dir, base := filepath.Dir(p), filepath.Base(p)
	if noOpenat2.Load() || (dirs == nil && dir == "/") {
		return lookupByPath(p)
	}
	var fd int
	var err error
	if dirs != nil {
		fd, err = dirs.open(dir)
	} else if fd, err = openNoLinks(unix.AT_FDCWD, dir); err == nil {
		defer unix.Close(fd)
	}
	switch {
	case err == nil:
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		// O_PATH needs no permission on the directory: EPERM is a
		// seccomp filter refusing openat2.
		noOpenat2.Store(true)
		return lookupByPath(p)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
		return linkInfo{}, nil // the parent is gone, or not a directory: p does not exist
	case errors.Is(err, unix.ELOOP):
		return linkInfo{}, fmt.Errorf("lstat %s: %w", p, errSwapped)
	default:
		return linkInfo{}, fmt.Errorf("lstat %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return linkInfo{}, nil
		}
		return linkInfo{}, fmt.Errorf("lstat %s: %w", p, err)
	}
	li := linkInfo{
		exists: true,
		dir:    st.Mode&unix.S_IFMT == unix.S_IFDIR,
		id:     FileID{Dev: st.Dev, Ino: st.Ino},
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(fd, base, buf)
		if err != nil {
			return li, fmt.Errorf("readlink %s: %w", p, err)
		}
		li.target = string(buf[:n])
	}
	return li, nil
}

// openNoLinks opens name, relative to dirfd, as an O_PATH directory
// without following a symbolic link anywhere on the way.
func openNoLinks(dirfd int, name string) (fd int, err error) {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range 8 {
		if fd, err = unix.Openat2(dirfd, name, &how); !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			break
		}
	}
	return fd, err
}

// dirChain holds open (O_PATH) directories a resolver looked in, each
// inside the one before (paths[0] is /), each opened by its whole path
// without following a link: the parent of its last lookup and those of
// earlier ones above it. A lookup in one of them costs an fstatat; in
// another directory, an openat2 of it as well, kept for the next. (Opened
// one name at a time from the nearest one held instead, a policy of deep
// chains of roots took 18% longer.) A directory swapped for a link after
// it was opened here is still described as the directory it was, not as
// where the link points; the launch's identity check and the backends'
// own opens refuse a root that moved since.
type dirChain struct {
	paths []string
	fds   []int
}

func newDirChain() *dirChain { return &dirChain{} }

// open returns a descriptor of dir (absolute, clean), owned by the chain:
// valid until the next call or close.
func (d *dirChain) open(dir string) (int, error) {
	i := len(d.paths) - 1
	for i >= 0 && !inOrAt(dir, d.paths[i]) {
		i--
	}
	d.truncate(i + 1)
	if i >= 0 && d.paths[i] == dir {
		return d.fds[i], nil
	}
	fd, err := openNoLinks(unix.AT_FDCWD, dir)
	if err != nil {
		return -1, err
	}
	d.paths, d.fds = append(d.paths, dir), append(d.fds, fd)
	return fd, nil
}

// inOrAt reports whether p is dir or lies below it.
func inOrAt(p, dir string) bool {
	return dir == "/" || len(p) >= len(dir) && p[:len(dir)] == dir && (len(p) == len(dir) || p[len(dir)] == '/')
}

// truncate closes the directories from n on.
func (d *dirChain) truncate(n int) {
	for _, fd := range d.fds[n:] {
		unix.Close(fd)
	}
	d.paths, d.fds = d.paths[:n], d.fds[:n]
}

func (d *dirChain) close() {
	if d != nil {
		d.truncate(0)
	}
}
