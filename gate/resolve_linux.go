package gate

import (
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openBase opens the object's starting point: a descriptor of the caller,
// or its working directory, through the magic link and before the pid is
// checked to still be the caller. An absolute path needs none.
func (g *gate) openBase(c *call) (errno unix.Errno, ok bool) {
	if !c.self && filepath.IsAbs(c.rel) {
		return 0, true
	}
	a := &g.n.args
	where := "/proc/" + c.pid + "/cwd"
	// AT_FDCWD is the working directory only where a path goes with
	// it; fchmod(AT_FDCWD) is a bad descriptor.
	if c.dirfd >= 0 && (c.path < 0 || int32(a[c.dirfd]) != atFdcwd) {
		n := int32(a[c.dirfd])
		if n < 0 {
			return unix.EBADF, true
		}
		where = "/proc/" + c.pid + "/fd/" + strconv.Itoa(int(n))
	}
	if c.procFd >= 0 {
		where = "/proc/" + c.pid + "/fd/" + strconv.Itoa(c.procFd)
	}
	base, err := unix.Open(where, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			err = unix.EBADF // no such descriptor in the caller
		}
		return errnoOf(err), g.valid()
	}
	c.base = base
	return 0, true
}

// resolve opens the object once; everything after acts on this
// descriptor, so a path swapped meanwhile changes nothing. owned says
// the descriptor is new, for the caller to close.
func resolve(c *call) (obj int, owned bool, errno unix.Errno) {
	if c.self {
		return c.base, false, 0
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if !c.follow {
		how.Flags |= unix.O_NOFOLLOW
	}
	dir := c.base
	if filepath.IsAbs(c.rel) {
		dir = unix.AT_FDCWD // the sandbox shares the launcher's root
	}
	obj, err := unix.Openat2(dir, c.rel, &how)
	if err != nil {
		return 0, false, errnoOf(err)
	}
	return obj, true, 0
}

// pathOf is the path of the object resolved, or false when it has none
// to decide on: an unlinked file, a pipe, a socket, a memfd.
func (g *gate) pathOf(fdPath string, st *unix.Stat_t) (string, bool) {
	n, err := unix.Readlink(fdPath, g.link[:])
	if err != nil || n >= len(g.link) || st.Nlink == 0 {
		return "", false
	}
	p := string(g.link[:n])
	if !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}
