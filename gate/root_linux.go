package gate

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A sandbox with a root of its own (a mount namespace: the native and
// bwrap backends) is served by a Decider that is Rooted. The gate then
// resolves every name in the sandbox's own view, beneath /proc/PID/root
// (RESOLVE_IN_ROOT), a relative one from the caller's working directory
// or descriptor as the sandbox sees it, so the sandbox's mounts apply to
// what the gate performs: a read-only bind answers EROFS to the gate as
// it would to the sandbox. No kernel wall there checks the names the
// model protects, so the gate never lets the kernel continue a call it
// was sent: it performs each itself, or answers what the kernel would.
type Rooted interface {
	OwnRoot() bool
}

// ownRoot says whether d's sandbox has a root of its own.
func ownRoot(d Decider) bool {
	r, ok := d.(Rooted)
	return ok && r.OwnRoot()
}

// openRoot opens the caller's root for one request.
func (g *gate) openRoot(pid string) unix.Errno {
	fd, err := unix.Open("/proc/"+pid+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return unix.EPERM
	}
	g.root = fd
	return 0
}

func (g *gate) closeRoot() {
	if g.root >= 0 {
		unix.Close(g.root)
		g.root = -1
	}
}

// at is the descriptor a path resolves from: base, or for an absolute
// path (base -1) the sandbox's root: the launcher's own, or the
// caller's under a Rooted decider (then with inRoot).
func (g *gate) at(base int) int {
	switch {
	case base >= 0:
		return base
	case g.own:
		return g.root
	}
	return unix.AT_FDCWD
}

// openat2 resolves p from base as at says, beneath the caller's root
// when it has its own.
func (g *gate) openat2(base int, p string, how unix.OpenHow) (int, error) {
	if base < 0 && g.own {
		how.Resolve |= unix.RESOLVE_IN_ROOT
	}
	return unix.Openat2(g.at(base), p, &how)
}

// absolute makes rel, relative to the caller's descriptor at args[idx]
// or its working directory, an absolute path in the caller's own view
// (the directory's path as /proc shows it from outside its mount
// namespace is its path inside), so that resolving it beneath the
// caller's root meets the links and ".." the caller would. A name
// swapped meanwhile only moves the call elsewhere: the gate decides on
// the directory it resolves.
func (g *gate) absolute(pid string, idx int, rel string, buf []byte) (string, unix.Errno) {
	where := "/proc/" + pid + "/cwd"
	if idx >= 0 {
		n := int32(g.n.args[idx])
		switch {
		case n == atFdcwd:
		case n < 0:
			return "", unix.EBADF
		default:
			where = "/proc/" + pid + "/fd/" + strconv.Itoa(int(n))
		}
	}
	m, err := unix.Readlink(where, buf)
	if err == unix.ENOENT {
		return "", unix.EBADF // no such descriptor in the caller
	}
	if err != nil {
		return "", errnoOf(err)
	}
	if m >= len(buf) {
		return "", unix.ENAMETOOLONG
	}
	dir := string(buf[:m])
	if !strings.HasPrefix(dir, "/") || strings.HasSuffix(dir, " (deleted)") {
		return "", unix.ENOTDIR // a pipe, a socket, a file gone
	}
	if len(dir)+1+len(rel) >= pathMax {
		return "", unix.ENAMETOOLONG
	}
	if dir == "/" {
		return "/" + rel, 0
	}
	return dir + "/" + rel, 0
}

// magic maps the caller's own magic links at the start of an absolute
// path, which the gate cannot follow in the caller's root (its /proc/self
// names nobody from outside): /dev/stdin, /dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N and /proc/thread-self/fd/N. With rest, the
// descriptor is a directory and the path goes on beneath it, in the
// caller's view; without, fd is the caller's descriptor the path names.
func magic(p string) (fd int, rest string, ok bool) {
	switch p {
	case "/dev/stdin":
		return 0, "", true
	case "/dev/stdout":
		return 1, "", true
	case "/dev/stderr":
		return 2, "", true
	}
	var tail string
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if strings.HasPrefix(p, pre) {
			tail = p[len(pre):]
			break
		}
	}
	if tail == "" {
		return -1, "", false
	}
	num, rest, _ := strings.Cut(tail, "/")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || strconv.Itoa(n) != num {
		return -1, "", false
	}
	return n, rest, true
}

// unmagic rewrites an absolute path that starts at the caller's own
// magic link to the path it stands for; a path that is the link itself
// gives the descriptor (fd >= 0) for the caller to reopen.
func (g *gate) unmagic(pid, p string, buf []byte) (string, int, unix.Errno) {
	n, rest, ok := magic(p)
	if !ok {
		return p, -1, 0
	}
	if rest == "" {
		return "", n, 0
	}
	m, err := unix.Readlink("/proc/"+pid+"/fd/"+strconv.Itoa(n), buf)
	if err != nil {
		return "", -1, unix.EBADF
	}
	if m >= len(buf) {
		return "", -1, unix.ENAMETOOLONG
	}
	dir := string(buf[:m])
	if !strings.HasPrefix(dir, "/") || strings.HasSuffix(dir, " (deleted)") {
		return "", -1, unix.ENOTDIR
	}
	if len(dir)+1+len(rest) >= pathMax {
		return "", -1, unix.ENAMETOOLONG
	}
	return strings.TrimSuffix(dir, "/") + "/" + rest, -1, 0
}

// reopen opens, for the caller, the object obj (O_PATH) that an O_CREAT
// open found already there, as the kernel would open it: through
// /proc/self/fd, with the caller's flags but those that make a name.
// A directory answers EISDIR, the controlling terminal the caller's own
// (ctty). A FIFO is opened without waiting for its other end: ENXIO
// when a writer finds no reader yet (the gate answers one call at a
// time, and must not wait on the sandbox).
func (g *gate) reopen(pid string, obj, flags int) (int64, unix.Errno, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err), true
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	ctty := false
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return 0, unix.EISDIR, true
	case unix.S_IFLNK:
		return 0, unix.ELOOP, true
	case unix.S_IFCHR:
		if st.Rdev == unix.Mkdev(5, 0) { // /dev/tty: the caller's, not the launcher's
			p, e := g.ctty(pid)
			if e != 0 {
				return 0, e, true
			}
			fdPath, ctty = p, true
		}
	}
	fifo := st.Mode&unix.S_IFMT == unix.S_IFIFO
	open := flags &^ (unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW)
	if fifo {
		open |= unix.O_NONBLOCK
	}
	g.acting(fdPath)
	var fd int
	var err error
	if ctty {
		// The caller's terminal, through its /proc/PID/fd, which a
		// thread in a Landlock domain of its own may not reach: a
		// device opened, no name made or file written.
		fd, err = unix.Open(fdPath, open|unix.O_CLOEXEC, 0)
	} else {
		fd, err = g.openWalled(unix.AT_FDCWD, fdPath, open|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, errnoOf(err), true
	}
	if fifo && flags&unix.O_NONBLOCK == 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, open&^unix.O_NONBLOCK&^unix.O_ACCMODE); err != nil {
			unix.Close(fd)
			return 0, errnoOf(err), true
		}
	}
	return g.addFd(fd, flags&unix.O_CLOEXEC != 0)
}

// ctty is the caller's controlling terminal as one of its standard
// descriptors (the terminal device of its /proc/PID/stat); ENXIO, what
// the kernel answers a process without one, when none of them is it.
func (g *gate) ctty(pid string) (string, unix.Errno) {
	fd, err := unix.Open("/proc/"+pid+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", unix.ENXIO
	}
	n, err := unix.Read(fd, g.ent.status[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return "", unix.ENXIO
	}
	s := string(g.ent.status[:n])
	i := strings.LastIndexByte(s, ')') // the command's name may hold anything
	if i < 0 {
		return "", unix.ENXIO
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 5 {
		return "", unix.ENXIO
	}
	tty, err := strconv.ParseUint(f[4], 10, 64) // tty_nr, after state, ppid, pgrp, session
	if err != nil || tty == 0 {
		return "", unix.ENXIO
	}
	for i := range 3 {
		p := "/proc/" + pid + "/fd/" + strconv.Itoa(i)
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && uint64(st.Rdev) == tty {
			return p, 0
		}
	}
	return "", unix.ENXIO
}

// noName answers, under a Rooted decider, a call on "", "." or ".." or
// through a path the gate cannot resolve for the caller, what the kernel
// would answer, or EACCES; elsewhere the kernel continues it, Landlock
// checking.
func (g *gate) noName(e unix.Errno) (int64, unix.Errno, bool) {
	if g.own {
		return 0, e, true
	}
	return g.cont()
}

// openOwn decides, under a Rooted decider, an open that may make a
// file: it makes the file itself where the model lets the sandbox, or
// opens what is already there (reopen), following links itself in the
// caller's root, at most 40 as the kernel does.
func (g *gate) openOwn(ed EntryDecider, pid, rel string, flags int, mode uint32) (int64, unix.Errno, bool) {
	for range 40 {
		p, mfd, e := g.unmagic(pid, rel, g.ent.target[:])
		if e != 0 {
			return 0, e, true
		}
		if mfd >= 0 {
			obj, err := unix.Open("/proc/"+pid+"/fd/"+strconv.Itoa(mfd), unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return 0, unix.EBADF, true
			}
			defer unix.Close(obj)
			return g.reopen(pid, obj, flags)
		}
		n, e := g.find(-1, p, g.link[:])
		if e != 0 {
			return 0, e, true
		}
		next, done, val, e := g.openAt(ed, pid, n, flags, mode)
		n.close()
		if done {
			return val, e, e != 0 || val >= 0
		}
		rel = next
	}
	return 0, unix.ELOOP, true
}

// openAt is one step of openOwn on the name n: done with the call's
// answer, or the path a link there leads to (next; "" when the name
// came or went meanwhile, to look again).
func (g *gate) openAt(ed EntryDecider, pid string, n named, flags int, mode uint32) (next string, done bool, val int64, errno unix.Errno) {
	answer := func(v int64, e unix.Errno, ok bool) (string, bool, int64, unix.Errno) {
		if !ok {
			return "", true, -1, 0 // nobody to answer: one treats -1 with no errno as gone
		}
		return "", true, v, e
	}
	if n.special || n.slash {
		return "", true, 0, unix.EISDIR
	}
	var st unix.Stat_t
	err := unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		if !ed.MayCreate(n.path, false) {
			return "", true, 0, unix.EACCES
		}
		g.acting(n.path)
		fd, err := g.openWalled(n.dir, n.name, flags|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
			return n.path, false, 0, 0 // made meanwhile: look again
		}
		if err != nil {
			return "", true, 0, errnoOf(err)
		}
		return answer(g.addFd(fd, flags&unix.O_CLOEXEC != 0))
	case err != nil:
		return "", true, 0, errnoOf(err)
	case flags&unix.O_EXCL != 0:
		return "", true, 0, unix.EEXIST
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		if flags&unix.O_NOFOLLOW != 0 {
			return "", true, 0, unix.ELOOP
		}
		m, err := unix.Readlinkat(n.dir, n.name, g.ent.link2[:])
		if err != nil || m >= len(g.ent.link2) || m == 0 {
			return n.path, false, 0, 0 // changed meanwhile: look again
		}
		t := string(g.ent.link2[:m])
		if !strings.HasPrefix(t, "/") {
			t = strings.TrimSuffix(n.dirPath, "/") + "/" + t
		}
		return t, false, 0, 0
	}
	obj, err := unix.Openat(n.dir, n.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return n.path, false, 0, 0
	}
	if err != nil {
		return "", true, 0, errnoOf(err)
	}
	defer unix.Close(obj)
	return answer(g.reopen(pid, obj, flags))
}

// unmagicBoth rewrites the paths of a call but open that start at the
// caller's own magic links (unmagic). One that names such a link itself
// names an object that exists: making it is EEXIST, anything else the
// gate does not do for a descriptor (EACCES).
func (g *gate) unmagicBoth(pid string, f entryForm, rel, rel2 string) (string, string, unix.Errno) {
	p, mfd, e := g.unmagic(pid, rel, g.ent.target[:])
	if e != 0 {
		return "", "", e
	}
	if mfd >= 0 {
		if f.op == entMkdir || f.op == entMknod || f.op == entSymlink {
			return "", "", unix.EEXIST
		}
		return "", "", unix.EACCES
	}
	if f.path2 < 0 {
		return p, rel2, 0
	}
	p2, mfd, e := g.unmagic(pid, rel2, g.ent.target[:])
	if e != 0 {
		return "", "", e
	}
	if mfd >= 0 {
		return "", "", unix.EEXIST
	}
	return p, p2, 0
}
