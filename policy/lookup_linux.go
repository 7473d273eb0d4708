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
func lookupEntry(p string) (linkInfo, error) {
	dir, base := filepath.Dir(p), filepath.Base(p)
	if dir == "/" || noOpenat2.Load() {
		return lookupByPath(p)
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	var err error
	for range 8 {
		if fd, err = unix.Openat2(unix.AT_FDCWD, dir, &how); !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			break
		}
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
	defer unix.Close(fd)
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
