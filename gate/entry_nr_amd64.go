//go:build linux

package gate

import "golang.org/x/sys/unix"

var entryForms = map[int32]entryForm{
	unix.SYS_OPEN:      {op: entOpen, dirfd: -1, path: 0, flags: 1, mode: 2, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_OPENAT:    {op: entOpen, dirfd: 0, path: 1, flags: 2, mode: 3, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_CREAT:     {op: entOpen, dirfd: -1, path: 0, flags: -1, mode: 1, dirfd2: -1, path2: -1, arg: -1, creat: true},
	unix.SYS_MKDIR:     {op: entMkdir, dirfd: -1, path: 0, flags: -1, mode: 1, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_MKDIRAT:   {op: entMkdir, dirfd: 0, path: 1, flags: -1, mode: 2, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_MKNOD:     {op: entMknod, dirfd: -1, path: 0, flags: -1, mode: 1, dirfd2: -1, path2: -1, arg: 2},
	unix.SYS_MKNODAT:   {op: entMknod, dirfd: 0, path: 1, flags: -1, mode: 2, dirfd2: -1, path2: -1, arg: 3},
	unix.SYS_UNLINK:    {op: entUnlink, dirfd: -1, path: 0, flags: -1, mode: -1, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_UNLINKAT:  {op: entUnlink, dirfd: 0, path: 1, flags: 2, mode: -1, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_RMDIR:     {op: entRmdir, dirfd: -1, path: 0, flags: -1, mode: -1, dirfd2: -1, path2: -1, arg: -1},
	unix.SYS_RENAME:    {op: entRename, dirfd: -1, path: 0, flags: -1, mode: -1, dirfd2: -1, path2: 1, arg: -1},
	unix.SYS_RENAMEAT:  {op: entRename, dirfd: 0, path: 1, flags: -1, mode: -1, dirfd2: 2, path2: 3, arg: -1},
	unix.SYS_RENAMEAT2: {op: entRename, dirfd: 0, path: 1, flags: 4, mode: -1, dirfd2: 2, path2: 3, arg: -1},
	unix.SYS_LINK:      {op: entLink, dirfd: -1, path: 0, flags: -1, mode: -1, dirfd2: -1, path2: 1, arg: -1},
	unix.SYS_LINKAT:    {op: entLink, dirfd: 0, path: 1, flags: 4, mode: -1, dirfd2: 2, path2: 3, arg: -1},
	unix.SYS_SYMLINK:   {op: entSymlink, dirfd: -1, path: 1, flags: -1, mode: -1, dirfd2: -1, path2: -1, arg: 0},
	unix.SYS_SYMLINKAT: {op: entSymlink, dirfd: 1, path: 2, flags: -1, mode: -1, dirfd2: -1, path2: -1, arg: 0},
	unix.SYS_TRUNCATE:  {op: entTruncate, dirfd: -1, path: 0, flags: -1, mode: -1, dirfd2: -1, path2: -1, arg: 1},
}
