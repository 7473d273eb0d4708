//go:build linux && (amd64 || arm64)

package workspace

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstatJoin is lstat(2) of dir + "/" + name, the path built in buf on the
// caller's stack rather than as two new strings: the git guard looks at
// several such paths in each of thousands of repositories. A path longer
// than buf is looked up as a string.
func lstatJoin(buf *[512]byte, dir, name string, st *syscall.Stat_t) error {
	if len(dir)+1+len(name) >= len(buf) {
		return syscall.Lstat(dir+"/"+name, st)
	}
	n := copy(buf[:], dir)
	buf[n] = '/'
	n++
	n += copy(buf[n:], name)
	buf[n] = 0
	cwd := unix.AT_FDCWD
	_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])),
		uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
