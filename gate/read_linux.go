package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// xattrListMax is XATTR_LIST_MAX: the longest list listxattr returns.
const xattrListMax = 65536

// takeInotify reads inotify_add_watch's mask and takes the caller's
// inotify descriptor (pidfd_getfd), before the pid is checked to still be
// the caller: the watch is added on that very instance, so the caller
// gets the watch descriptor its instance numbers.
func (g *gate) takeInotify(c *call) (errno unix.Errno, ok bool) {
	a := &g.n.args
	c.mask = uint32(a[c.arg])
	if c.mask&unix.IN_DONT_FOLLOW != 0 {
		c.follow = false
	}
	n := int32(a[0])
	if n < 0 {
		return unix.EBADF, true
	}
	pidfd, err := pidfdOpen(int(g.n.pid))
	if err != nil {
		return unix.EPERM, g.valid()
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, int(n), 0)
	if err != nil {
		return errnoOf(err), g.valid()
	}
	c.inotify = fd
	return 0, true
}

// pidfdOpen opens the process of thread tid (the notification names the
// calling thread): by the thread itself since Linux 6.9, else by its
// thread group.
func pidfdOpen(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if err != unix.EINVAL {
		return fd, err
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return -1, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			tgid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return -1, err
			}
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, unix.ESRCH
}

// actRead resolves a reading call's object, decides by the model where
// the sandbox may read, checks what the kernel would check for the
// sandbox's identity, and answers: a value copied into the caller's
// buffer, or a watch added on its inotify instance. A refusal is EACCES,
// what Landlock answers for opening the same object: stat still answers
// for it, so ENOENT would be a lie the sandbox can see through.
func (g *gate) actRead(c *call, mem int) (int64, unix.Errno) {
	obj, owned, e := resolve(c)
	if e != 0 {
		return 0, e
	}
	if owned {
		defer unix.Close(obj)
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err)
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	where, ok := g.pathOf(fdPath, &st)
	// /proc/self resolved by the launcher is the launcher's: refused
	// rather than answered about the wrong process.
	if !ok || below(where, "/proc/"+strconv.Itoa(os.Getpid())) || !g.d.MayRead(where, dir) || !g.searchable(where) {
		return 0, unix.EACCES
	}
	if testhook.MetagateAct != nil {
		testhook.MetagateAct(int(g.n.pid), where)
	}
	switch c.op {
	case opGetxattr:
		return g.getxattr(c, mem, &st, fdPath)
	case opListxattr:
		return g.listxattr(c, mem, fdPath)
	default:
		if c.mask&unix.IN_ONLYDIR != 0 && !dir {
			return 0, unix.ENOTDIR
		}
		if !g.may(&st, fdPath, 4) {
			return 0, unix.EACCES
		}
		// The magic link names the object resolved; followed, it is
		// that object even when it is a link (IN_DONT_FOLLOW's case).
		wd, err := unix.InotifyAddWatch(c.inotify, fdPath, c.mask&^unix.IN_DONT_FOLLOW)
		if err != nil {
			return 0, errnoOf(err)
		}
		return int64(wd), 0
	}
}

// getxattr answers getxattr as the kernel would for the sandbox
// (fs/xattr.c xattr_permission: trusted.* needs CAP_SYS_ADMIN, user.*
// only on files and directories, read access but for security.* and
// system.*), with the kernel's sizes: 0 asks the length, a smaller
// buffer is ERANGE, more than XATTR_SIZE_MAX counts as that.
func (g *gate) getxattr(c *call, mem int, st *unix.Stat_t, fdPath string) (int64, unix.Errno) {
	switch {
	case strings.HasPrefix(c.name, "trusted."):
		return 0, unix.ENODATA
	case strings.HasPrefix(c.name, "security."), strings.HasPrefix(c.name, "system."):
	default:
		if t := st.Mode & unix.S_IFMT; strings.HasPrefix(c.name, "user.") && t != unix.S_IFREG && t != unix.S_IFDIR {
			return 0, unix.ENODATA
		}
		if !g.may(st, fdPath, 4) {
			return 0, unix.EACCES
		}
	}
	size := min(c.size, xattrSizeMax)
	n, err := unix.Getxattr(fdPath, c.name, g.value[:size])
	if err != nil {
		return 0, errnoOf(err)
	}
	if size > 0 {
		if e := writeFull(mem, c.buf, g.value[:n]); e != 0 {
			return 0, e
		}
	}
	return int64(n), 0
}

// listxattr answers listxattr with the names the sandbox would see: not
// trusted.*, which the launcher's capabilities may add.
func (g *gate) listxattr(c *call, mem int, fdPath string) (int64, unix.Errno) {
	n, err := unix.Listxattr(fdPath, g.value[:])
	if err == unix.ERANGE && c.size >= xattrListMax {
		return 0, unix.E2BIG
	}
	if err != nil {
		return 0, errnoOf(err)
	}
	list := g.value[:0]
	for rest := g.value[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			i = len(rest) - 1
		}
		if !bytes.HasPrefix(rest, []byte("trusted.")) {
			list = append(list, rest[:i+1]...) // in place: never ahead of rest
		}
		rest = rest[i+1:]
	}
	switch {
	case c.size == 0:
		return int64(len(list)), 0
	case c.size < uint64(len(list)):
		return 0, unix.ERANGE
	}
	if e := writeFull(mem, c.buf, list); e != 0 {
		return 0, e
	}
	return int64(len(list)), 0
}

// searchable checks, for a sandbox that is root without capabilities
// under a root launcher, that every directory above where grants it
// search: the launcher's walk did not check that for it. An ordinary
// user's launcher walked with the sandbox's own rights.
func (g *gate) searchable(where string) bool {
	if g.id.UID != 0 {
		return true
	}
	for d := filepath.Dir(where); ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil || !g.may(&st, d, 1) {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

// writeFull copies b into the caller's memory at addr. /proc/<pid>/mem
// writes even where the caller mapped read-only (a private copy, never the
// file): the kernel would answer EFAULT there.
func writeFull(mem int, addr uintptr, b []byte) unix.Errno {
	if int64(addr) < 0 || addr == 0 && len(b) > 0 {
		return unix.EFAULT
	}
	for put := 0; put < len(b); {
		m, err := unix.Pwrite(mem, b[put:], int64(addr)+int64(put))
		if err != nil || m <= 0 {
			return unix.EFAULT
		}
		put += m
	}
	return 0
}

// below reports whether p is dir or beneath it.
func below(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
