package safefs

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// dirFlags open a directory to resolve names in: O_PATH needs only search
// permission.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY

// noOpenat2 is set once openat2 is known to be missing (Linux before 5.6,
// or a seccomp profile that refuses it).
var noOpenat2 atomic.Bool

// openBeneath opens rel (cleaned, relative) beneath dirfd, following no
// symlink in any component and never leaving dirfd.
func openBeneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	if testhook.SafeFSFollow {
		return unix.Openat(dirfd, rel, (flags|unix.O_CLOEXEC)&^unix.O_NOFOLLOW, mode)
	}
	if !noOpenat2.Load() {
		how := unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
			Mode:    uint64(mode),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		}
		if flags&unix.O_CREAT == 0 {
			how.Mode = 0 // openat2 refuses a mode without O_CREAT or O_TMPFILE
		}
		for range 8 {
			fd, err := unix.Openat2(dirfd, rel, &how)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue // a concurrent rename or mount: the kernel asks to retry
			}
			if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) && probeNoOpenat2() {
				noOpenat2.Store(true)
				break
			}
			return fd, err
		}
	}
	return walk(dirfd, rel, flags, mode)
}

// probeNoOpenat2 tells an EPERM of a seccomp filter that refuses openat2
// from an EPERM about the file: openat2 of "/" itself must work.
func probeNoOpenat2() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
		return false
	}
	return true
}
