package gate

import (
	"slices"

	"github.com/cordon-sandbox/cordon/bwrap"
)

// A Decider decides by the backend's own model. MayChange says whether
// the sandbox may change the metadata of the object at path (absolute,
// clean, links resolved; a directory when dir, as the gate found the
// object it resolved): where it may write. MayRead says whether it may
// read what Landlock does not guard of that object (extended attributes,
// an inotify watch): where it may read.
type Decider interface {
	MayChange(path string, dir bool) bool
	MayRead(path string, dir bool) bool
}

// Funcs is a Decider in two functions.
type Funcs struct {
	Change, Read func(path string, dir bool) bool
}

// MayChange calls f.Change.
func (f Funcs) MayChange(path string, dir bool) bool { return f.Change(path, dir) }

// MayRead calls f.Read.
func (f Funcs) MayRead(path string, dir bool) bool { return f.Read(path, dir) }

// Identity is who the sandbox is to the kernel's permission checks: its
// file system user, its group and its supplementary groups. It has no
// capabilities.
type Identity struct {
	UID, GID uint32
	Groups   []uint32
}

// Calls are the system calls the gate decides (by bwrap's names; those an
// architecture lacks are skipped there).
var Calls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"utime", "utimes", "futimesat", "utimensat",
	// Reading: by path only. fgetxattr and flistxattr need a descriptor
	// that is not O_PATH (EBADF), which the sandbox could open only
	// where Landlock let it read or write: the launcher's filter refuses
	// the one open Landlock lets through anywhere, access mode 3
	// (bwrap.Rules.NoAccessOpens).
	"getxattr", "lgetxattr", "listxattr", "llistxattr", "inotify_add_watch",
}

// eacces is what a refused read answers (fanotify_mark, below).
const eacces = 13

// enosys is the errno of the calls Rules refuses.
const enosys = 38

// The ioctls that set an inode's flags (linux/fs.h), the same numbers on
// x86_64 and aarch64. Without capabilities the owner may still set
// nodump (backups skip the file), noatime, sync, no-copy-on-write...
const (
	fsIocSetflags   = 0x40086602 // FS_IOC_SETFLAGS
	fsIoc32Setflags = 0x40046602 // FS_IOC32_SETFLAGS
	fsIocFssetxattr = 0x401c5820 // FS_IOC_FSSETXATTR
)

// Rules returns base with the gate's calls handed to the supervisor, and
// the newer calls that change the same metadata refused with ENOSYS, what
// an older kernel answers, so that libraries fall back to the calls the
// gate decides: setxattrat, removexattrat, getxattrat and listxattrat
// (Linux 6.13), file_setattr (6.17: the project ID and the inode flags
// FS_IOC_FSSETXATTR sets) and file_getattr, which reads them by path, in
// a denied root too (FS_IOC_FSGETXATTR needs a descriptor that is not
// O_PATH, which the sandbox cannot open there); fanotify_mark is refused (EACCES): the
// launcher would have to place the mark itself, and an unprivileged
// group's inode marks report the names made in a directory; and
// the ioctls that set inode flags are refused with ENOTTY, what a file
// system without flags answers (chattr).
func Rules(base bwrap.Rules) bwrap.Rules {
	r := base
	r.Notify = slices.Clone(Calls)
	r.RefuseIoctls = append(slices.Clone(base.RefuseIoctls), fsIocSetflags, fsIoc32Setflags, fsIocFssetxattr)
	r.Refuse = append(slices.Clone(base.Refuse),
		bwrap.Refusal{Syscall: "setxattrat", Errno: enosys},
		bwrap.Refusal{Syscall: "removexattrat", Errno: enosys},
		bwrap.Refusal{Syscall: "file_setattr", Errno: enosys},
		bwrap.Refusal{Syscall: "getxattrat", Errno: enosys},
		bwrap.Refusal{Syscall: "listxattrat", Errno: enosys},
		bwrap.Refusal{Syscall: "file_getattr", Errno: enosys},
		bwrap.Refusal{Syscall: "fanotify_mark", Errno: eacces})
	return r
}
