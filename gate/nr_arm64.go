//go:build linux

package gate

import "golang.org/x/sys/unix"

const auditArch = 0xc00000b7 // AUDIT_ARCH_AARCH64

// aarch64 has only the *at and f* forms.
var forms = map[int32]form{
	unix.SYS_FCHMOD:            {op: opChmod, dirfd: 0, path: -1, arg: 1, flags: -1},
	unix.SYS_FCHMODAT:          {op: opChmod, dirfd: 0, path: 1, arg: 2, flags: -1, follow: true},
	sysFchmodat2:               {op: opChmod, dirfd: 0, path: 1, arg: 2, flags: 3, follow: true},
	unix.SYS_FCHOWN:            {op: opChown, dirfd: 0, path: -1, arg: 1, flags: -1},
	unix.SYS_FCHOWNAT:          {op: opChown, dirfd: 0, path: 1, arg: 2, flags: 4, follow: true},
	unix.SYS_SETXATTR:          {op: opSetxattr, dirfd: -1, path: 0, arg: 1, flags: -1, follow: true},
	unix.SYS_LSETXATTR:         {op: opSetxattr, dirfd: -1, path: 0, arg: 1, flags: -1},
	unix.SYS_FSETXATTR:         {op: opSetxattr, dirfd: 0, path: -1, arg: 1, flags: -1},
	unix.SYS_REMOVEXATTR:       {op: opRemovexattr, dirfd: -1, path: 0, arg: 1, flags: -1, follow: true},
	unix.SYS_LREMOVEXATTR:      {op: opRemovexattr, dirfd: -1, path: 0, arg: 1, flags: -1},
	unix.SYS_FREMOVEXATTR:      {op: opRemovexattr, dirfd: 0, path: -1, arg: 1, flags: -1},
	unix.SYS_UTIMENSAT:         {op: opUtimensat, dirfd: 0, path: 1, arg: 2, flags: 3, follow: true, nullPath: true},
	unix.SYS_GETXATTR:          {op: opGetxattr, dirfd: -1, path: 0, arg: 1, flags: -1, follow: true},
	unix.SYS_LGETXATTR:         {op: opGetxattr, dirfd: -1, path: 0, arg: 1, flags: -1},
	unix.SYS_LISTXATTR:         {op: opListxattr, dirfd: -1, path: 0, arg: 1, flags: -1, follow: true},
	unix.SYS_LLISTXATTR:        {op: opListxattr, dirfd: -1, path: 0, arg: 1, flags: -1},
	unix.SYS_INOTIFY_ADD_WATCH: {op: opWatch, dirfd: -1, path: 1, arg: 2, flags: -1, follow: true},
}
