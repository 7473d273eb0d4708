package gate

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The opens of the entry gate: an open that makes a file, or writes or
// truncates one, decided and performed, its descriptor handed to the
// caller.

// open decides open, openat and creat that make a file or write one.
func (g *gate) open(ed EntryDecider, base int, rel string, flags int, mode uint32) (int64, unix.Errno, bool) {
	if flags&unix.O_CREAT == 0 {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.O_NOFOLLOW != 0 {
			how.Flags |= unix.O_NOFOLLOW
		}
		obj, err := g.openat2(base, rel, how)
		if err == unix.ELOOP {
			return g.throughMagicLink()
		}
		if err != nil {
			return 0, errnoOf(err), true
		}
		defer unix.Close(obj)
		return g.openExisting(ed, obj, flags)
	}
	n, e := g.find(base, rel, g.link[:])
	if e != 0 {
		return 0, e, true
	}
	defer n.close()
	if n.special {
		// Continuing is safe: no new name is made (the kernel answers
		// EISDIR or EEXIST), and Landlock checks what the kernel opens.
		return g.cont()
	}
	if n.slash {
		return 0, unix.EISDIR, true
	}
	// A name that appears or goes between the look and the call is
	// looked at again, a few times: then the caller hears EAGAIN.
	for range 3 {
		if r, e, ok, again := g.openName(ed, n, flags, mode); !again {
			return r, e, ok
		}
	}
	return 0, unix.EAGAIN, true
}

// openName decides an O_CREAT open of n by one look at what n names:
// again when that changed before the call.
func (g *gate) openName(ed EntryDecider, n named, flags int, mode uint32) (r int64, e unix.Errno, ok, again bool) {
	var st unix.Stat_t
	err := unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return g.openNew(ed, n, flags, mode)
	case err != nil:
		return 0, errnoOf(err), true, false
	case flags&unix.O_EXCL != 0:
		return 0, unix.EEXIST, true, false
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		r, e, ok = g.openLink(ed, n, flags)
		return r, e, ok, false
	}
	obj, err := unix.Openat(n.dir, n.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return 0, 0, false, true
	}
	if err != nil {
		return 0, errnoOf(err), true, false
	}
	defer unix.Close(obj)
	r, e, ok = g.openExisting(ed, obj, flags)
	return r, e, ok, false
}

// openNew decides an O_CREAT open where n names nothing: the gate makes
// the file, exclusively, in a private creation directory (recording it)
// or where the model lets the sandbox create it; again when a name
// appeared meanwhile and the caller did not ask for O_EXCL.
func (g *gate) openNew(ed EntryDecider, n named, flags int, mode uint32) (r int64, e unix.Errno, ok, again bool) {
	private := ed.Private(n.dirPath)
	if private {
		if len(g.ent.made) >= MaxMade {
			return 0, unix.ENOSPC, true, false
		}
	} else if ed.KernelAllows(n.path, NeedEntry) {
		// Continuing is safe: Landlock lets the sandbox make files in
		// this directory, and checks again whatever the kernel resolves
		// (a link swapped in, a file opened instead).
		r, e, ok = g.cont()
		return r, e, ok, false
	} else if !ed.MayCreate(n.path, false) {
		return 0, unix.EACCES, true, false
	}
	g.acting(n.path)
	fd, err := g.openWalled(n.dir, n.name, flags|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
		return 0, 0, false, true
	}
	if err != nil {
		return 0, errnoOf(err), true, false
	}
	if private {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return 0, errnoOf(err), true, false
		}
		g.ent.record(n.dirPath, n.name, &st)
	}
	r, e, ok = g.addFd(fd, flags&unix.O_CLOEXEC != 0)
	return r, e, ok, false
}

// openLink decides an O_CREAT open of n, a symbolic link: the gate
// opens what it names, and makes nothing through it.
func (g *gate) openLink(ed EntryDecider, n named, flags int) (int64, unix.Errno, bool) {
	if flags&unix.O_NOFOLLOW != 0 {
		return 0, unix.ELOOP, true
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	obj, err := unix.Openat2(n.dir, n.name, &how)
	if err == unix.ELOOP {
		return g.throughMagicLink() // /dev/stderr
	}
	if err == unix.ENOENT {
		// A link to nothing: the kernel would make its target.
		// Continuing is safe: Landlock checks making it where the link
		// points; the gate makes nothing through a link.
		return g.cont()
	}
	if err != nil {
		return 0, errnoOf(err), true
	}
	defer unix.Close(obj)
	return g.openExisting(ed, obj, flags)
}

// throughMagicLink answers an open whose path goes through a magic link
// (/dev/stderr, /proc/self/fd/N: the command's own descriptors, which the
// gate cannot resolve for the caller) or a loop of links. Continuing is
// safe: the gate makes nothing, and Landlock checks the object the
// kernel reaches (a descriptor handed in has a rule on its own inode,
// with the access its open mode gave).
func (g *gate) throughMagicLink() (int64, unix.Errno, bool) { return g.cont() }

// onProc says whether fd is on a procfs, where /proc/self and its magic
// links name the launcher, not the caller.
func onProc(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// openExisting decides an open of the existing object obj (O_PATH) that
// writes or truncates it.
func (g *gate) openExisting(ed EntryDecider, obj, flags int) (int64, unix.Errno, bool) {
	if onProc(obj) {
		return g.throughMagicLink() // /proc/self would be the launcher's
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err), true
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return 0, unix.ELOOP, true // O_NOFOLLOW on a link
	case unix.S_IFREG:
	default:
		// Continuing is safe: a directory, device, FIFO or socket is
		// opened, not a file of the workspace written, and Landlock
		// checks it as without the gate (/dev/null is written here).
		return g.cont()
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	p, ok := g.pathOf(fdPath, &st)
	if !ok {
		return 0, unix.EACCES, true
	}
	write := flags&unix.O_ACCMODE != unix.O_RDONLY
	trunc := flags&unix.O_TRUNC != 0
	if dir := parentOf(p); ed.Private(dir) {
		// Only what the sandbox made there is its own.
		if !g.ent.isMade(dir, &st) {
			return 0, unix.EACCES, true
		}
	} else if (!write || ed.KernelAllows(p, NeedWrite)) && (!trunc || ed.KernelAllows(p, NeedTruncate)) {
		// Continuing is safe: Landlock lets the sandbox write (and
		// truncate) this file, and checks again what the kernel opens.
		return g.cont()
	} else if !ed.MayWrite(p) {
		return 0, unix.EACCES, true
	}
	g.acting(p)
	fd, err := g.openWalled(unix.AT_FDCWD, fdPath, flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW)|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errnoOf(err), true
	}
	return g.addFd(fd, flags&unix.O_CLOEXEC != 0)
}

// addFd gives fd to the caller as its call's result and closes it here:
// the descriptor added and the call answered with its number in one
// ioctl (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND), one
// trip to the caller and back rather than two (an ADDFD alone waits for
// the caller to take the descriptor, and the answer wakes it again). It
// answers the call itself: ok is false after it, nothing left to send.
//
// Every signal is blocked on this (locked) thread for the ioctl. The
// kernel marks a SEND request answered before the caller has taken the
// descriptor, and a signal that interrupts this thread's wait for that
// (Go's preemption sends them) withdraws the descriptor but not the
// answer, so the caller's open would return 0, its own stdin
// (kernel/seccomp.c, seccomp_notify_addfd, up to 6.18 at least). Blocked,
// a signal waits until the caller has the descriptor; only SIGKILL,
// which ends the launcher and the sandbox's gate with it, can come
// between. The caller cannot go between either: it waits killable
// (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV); before Linux 5.19 a signal to
// it there leaves it the descriptor, of the file it asked for.
func (g *gate) addFd(fd int, cloexec bool) (int64, unix.Errno, bool) {
	defer unix.Close(fd)
	a := addfd{id: g.n.id, srcfd: uint32(fd), flags: addfdSend}
	if cloexec {
		a.newfdFlags = unix.O_CLOEXEC
	}
	if testhook.EntrygateAddfd != nil {
		testhook.EntrygateAddfd()
	}
	all := unix.Sigset_t{}
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	var old unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old); err != nil {
		return 0, errnoOf(err), true
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	_, e := g.addfdIoctl(&a)
	if e == unix.EINVAL {
		// Before Linux 5.14 there is no SEND: the descriptor alone,
		// then the answer as for any call.
		a.flags = 0
		var r uintptr
		if r, e = g.addfdIoctl(&a); e == 0 {
			return int64(r), 0, true
		}
	}
	switch e {
	case 0, unix.ENOENT:
		return 0, 0, false // answered; or the caller was interrupted or is gone
	}
	return 0, e, true
}

func (g *gate) addfdIoctl(a *addfd) (uintptr, unix.Errno) {
	for {
		r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(g.listener), notifAddfd, uintptr(unsafe.Pointer(a)))
		if e != unix.EINTR { // the lock it takes first, interrupted: nothing done
			return r, e
		}
	}
}
