package gate

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// find opens the directory rel's last name is in, once (no magic
// links: the caller's /proc/self/fd/N is not followed), and says where
// it is. link is the buffer its path is read into.
func (g *gate) find(base int, rel string, link []byte) (named, unix.Errno) {
	q := strings.TrimRight(rel, "/")
	n := named{dir: -1, slash: len(q) < len(rel)}
	dir := "."
	switch i := strings.LastIndexByte(q, '/'); {
	case q == "":
		n.special, dir = true, "/"
	case i < 0:
		n.name = q
	case i == 0:
		dir, n.name = "/", q[1:]
	default:
		dir, n.name = q[:i], q[i+1:]
	}
	if n.name == "." || n.name == ".." {
		n.special = true
	}
	if n.special {
		return n, 0
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := g.openat2(base, dir, how)
	if err == unix.ELOOP {
		if g.own {
			return n, unix.ELOOP // a loop, or a magic link not the caller's own (unmagic)
		}
		n.special = true // through a magic link: see throughMagicLink
		return n, 0
	}
	if err != nil {
		return n, errnoOf(err)
	}
	if onProc(fd) {
		// /proc/self would be the launcher's here: the kernel resolves
		// it for the caller (see throughMagicLink).
		unix.Close(fd)
		if g.own {
			return n, unix.EACCES
		}
		n.special = true
		return n, 0
	}
	m, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), link)
	p := ""
	if err == nil && m < len(link) {
		p = string(link[:m])
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		unix.Close(fd)
		return n, unix.ENOENT
	}
	n.dir, n.dirPath = fd, p
	if p == "/" {
		n.path = "/" + n.name
	} else {
		n.path = p + "/" + n.name
	}
	return n, 0
}

func (n named) close() {
	if n.dir >= 0 {
		unix.Close(n.dir)
	}
}

// acting is the moment between the decision and the call: the test
// hook swaps a name there.
func (g *gate) acting(path string) {
	if testhook.EntrygateAct != nil {
		testhook.EntrygateAct(int(g.n.pid), path)
	}
}

// make decides mkdir, mknod and symlink.
func (g *gate) make(ed EntryDecider, op entOp, base int, rel string, mode uint32, dev uint64, target string) (int64, unix.Errno, bool) {
	n, e := g.find(base, rel, g.link[:])
	if e != 0 {
		return 0, e, true
	}
	defer n.close()
	if n.special || (n.slash && op != entMkdir) {
		// Continuing is safe: no new name is made ("." and ".." exist,
		// a trailing "/" names a directory), and Landlock checks the call.
		return g.noName(unix.EEXIST)
	}
	var st unix.Stat_t
	if unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return 0, unix.EEXIST, true // what the kernel answers first (mkdir -p needs it)
	}
	if ed.Private(n.dirPath) {
		if op != entMkdir {
			return 0, unix.EACCES, true // files, sockets and directories only
		}
		return g.mkdirPrivate(n, mode) // tmp_linux.go
	}
	if ed.KernelAllows(n.path, NeedEntry) {
		// Continuing is safe: Landlock lets the sandbox make entries
		// in this directory and checks again where the kernel makes it.
		return g.cont()
	}
	if !(ed.MayEntry(n.path) || op == entMkdir && ed.MayCreate(n.path, true)) {
		return 0, unix.EACCES, true
	}
	g.acting(n.path)
	err := g.perform(func() error {
		switch op {
		case entMkdir:
			return unix.Mkdirat(n.dir, n.name, mode)
		case entMknod:
			// Without capabilities the kernel refuses device nodes (EPERM).
			return unix.Mknodat(n.dir, n.name, mode, int(dev))
		}
		return unix.Symlinkat(target, n.dir, n.name)
	})
	if err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
}

// remove decides unlink, unlinkat and rmdir.
func (g *gate) remove(ed EntryDecider, base int, rel string, flags int) (int64, unix.Errno, bool) {
	if flags&^unix.AT_REMOVEDIR != 0 {
		return 0, unix.EINVAL, true
	}
	n, e := g.find(base, rel, g.link[:])
	if e != 0 {
		return 0, e, true
	}
	defer n.close()
	if n.special || (n.slash && flags == 0) {
		// Continuing is safe: the kernel refuses these (EINVAL,
		// ENOTEMPTY, EISDIR, ENOTDIR) and removes nothing, Landlock
		// checking.
		return g.cont()
	}
	var st unix.Stat_t
	if err := unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, errnoOf(err), true
	}
	if ed.Private(n.dirPath) {
		i := g.ent.madeAt(n.dirPath, n.name, &st)
		if i < 0 {
			return 0, unix.EACCES, true
		}
		g.acting(n.path)
		if err := unix.Unlinkat(n.dir, n.name, flags); err != nil {
			return 0, errnoOf(err), true
		}
		g.ent.forget(i)
		return 0, 0, true
	}
	if ed.KernelAllows(n.path, NeedEntry) {
		// Continuing is safe: Landlock lets the sandbox remove entries
		// here and checks again what the kernel removes.
		return g.cont()
	}
	if !ed.MayEntry(n.path) {
		return 0, unix.EACCES, true
	}
	g.acting(n.path)
	if err := unix.Unlinkat(n.dir, n.name, flags); err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
}

// rename decides rename, renameat and renameat2: both the old and the
// new name must be the sandbox's to change, with all beneath them, so a
// rename neither takes a protected name (or its ancestor) away nor puts
// anything on one.
func (g *gate) rename(ed EntryDecider, base int, rel string, base2 int, rel2 string, flags int) (int64, unix.Errno, bool) {
	if flags&^renameMask != 0 {
		return 0, unix.EINVAL, true
	}
	o, e := g.find(base, rel, g.link[:])
	if e != 0 {
		return 0, e, true
	}
	defer o.close()
	n, e := g.find(base2, rel2, g.ent.link2[:])
	if e != 0 {
		return 0, e, true
	}
	defer n.close()
	if o.special || n.special {
		// Continuing is safe: the kernel refuses renaming "." or ".."
		// (EBUSY, EINVAL), Landlock checking.
		return g.noName(unix.EBUSY)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(o.dir, o.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, errnoOf(err), true
	}
	if po, pn := ed.Private(o.dirPath), ed.Private(n.dirPath); po || pn {
		return g.renamePrivate(o, n, &st, po && pn, flags)
	}
	if e := g.bringsBoth(ed, o, n, &st, flags); e != 0 {
		return 0, e, true
	}
	if ed.KernelAllows(o.path, NeedEntry) && ed.KernelAllows(n.path, NeedEntry) {
		// Continuing is safe: Landlock lets the sandbox change both
		// directories and checks the rename again, with what it brings
		// in (its refer right).
		return g.cont()
	}
	if !ed.MayEntry(o.path) || !ed.MayEntry(n.path) {
		return 0, unix.EACCES, true
	}
	g.acting(o.path)
	if err := g.perform(func() error { return unix.Renameat2(o.dir, o.name, n.dir, n.name, uint(flags)) }); err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
}

// hardlink decides link and linkat: the new name must be the sandbox's to
// make, and the file it brings in the sandbox's to write, so a read-only
// file never gets a name where the sandbox writes.
func (g *gate) hardlink(ed EntryDecider, base int, rel string, base2 int, rel2 string, flags int) (int64, unix.Errno, bool) {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL, true
	}
	var obj int
	if rel == "" {
		if base < 0 {
			return 0, unix.ENOENT, true
		}
		obj = base // AT_EMPTY_PATH: the descriptor itself
	} else {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.AT_SYMLINK_FOLLOW == 0 {
			how.Flags |= unix.O_NOFOLLOW
		}
		fd, err := g.openat2(base, rel, how)
		if err != nil {
			return 0, errnoOf(err), true
		}
		defer unix.Close(fd)
		obj = fd
	}
	n, e := g.find(base2, rel2, g.ent.link2[:])
	if e != 0 {
		return 0, e, true
	}
	defer n.close()
	if n.special {
		return 0, unix.EEXIST, true
	}
	var st unix.Stat_t
	if unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return 0, unix.EEXIST, true
	}
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err), true
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return 0, unix.EPERM, true // no hard links to directories
	}
	if ed.Private(n.dirPath) {
		return g.linkPrivate(ed, obj, n, &st)
	}
	if ed.KernelAllows(n.path, NeedEntry) {
		// Continuing is safe: Landlock lets the sandbox make entries
		// here and checks the link again, with what it brings in (its
		// refer right: no more rights at the new name than the old).
		return g.cont()
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	p, ok := g.pathOf(fdPath, &st)
	// What the sandbox made in a private creation directory stays
	// there, for the gate to remove.
	if !ok || st.Mode&unix.S_IFMT == unix.S_IFLNK || ed.Private(parentOf(p)) || !ed.MayWrite(p) || !ed.MayEntry(n.path) {
		// A deleted file, or a link itself (which /proc/self/fd would
		// follow), is not linked by the gate.
		return 0, unix.EACCES, true
	}
	g.acting(n.path)
	if err := g.perform(func() error { return unix.Linkat(unix.AT_FDCWD, fdPath, n.dir, n.name, unix.AT_SYMLINK_FOLLOW) }); err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
}

// truncate decides truncate by path.
func (g *gate) truncate(ed EntryDecider, base int, rel string, size int64) (int64, unix.Errno, bool) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	obj, err := g.openat2(base, rel, how)
	if err == unix.ELOOP {
		return g.throughMagicLink()
	}
	if err != nil {
		return 0, errnoOf(err), true
	}
	defer unix.Close(obj)
	if onProc(obj) {
		return g.throughMagicLink()
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err), true
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return 0, unix.EISDIR, true
	case unix.S_IFREG:
	default:
		return 0, unix.EINVAL, true
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	p, ok := g.pathOf(fdPath, &st)
	if !ok {
		return 0, unix.EACCES, true
	}
	if dir := parentOf(p); ed.Private(dir) {
		if !g.ent.isMade(dir, &st) {
			return 0, unix.EACCES, true
		}
	} else if ed.KernelAllows(p, NeedTruncate) {
		// Continuing is safe: Landlock lets the sandbox truncate this
		// file and checks again what the kernel resolves.
		return g.cont()
	} else if !ed.MayWrite(p) {
		return 0, unix.EACCES, true
	}
	g.acting(p)
	fd, err := unix.Open(fdPath, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, errnoOf(err), true
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, size); err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
}

// renamePrivate decides a rename from or to a private creation
// directory: only within them, of a name the sandbox made, onto nothing
// or onto another it made.
func (g *gate) renamePrivate(o, n named, st *unix.Stat_t, both bool, flags int) (int64, unix.Errno, bool) {
	i := g.ent.madeAt(o.dirPath, o.name, st)
	if !both || i < 0 || flags&(unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) != 0 {
		return 0, unix.EACCES, true
	}
	var nst unix.Stat_t
	j := -1
	if unix.Fstatat(n.dir, n.name, &nst, unix.AT_SYMLINK_NOFOLLOW) == nil {
		if j = g.ent.madeAt(n.dirPath, n.name, &nst); j < 0 {
			return 0, unix.EACCES, true
		}
	}
	g.acting(o.path)
	if err := g.perform(func() error { return unix.Renameat2(o.dir, o.name, n.dir, n.name, uint(flags)) }); err != nil {
		return 0, errnoOf(err), true
	}
	g.ent.made[i].dir, g.ent.made[i].name = n.dirPath, n.name
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		g.ent.moved(o.path, n.path)
	}
	if j >= 0 {
		g.ent.forget(j)
	}
	return 0, 0, true
}

// linkPrivate decides a hard link made in a private creation directory:
// of a file the sandbox made there (sem_open links its new semaphore
// into place).
func (g *gate) linkPrivate(ed EntryDecider, obj int, n named, st *unix.Stat_t) (int64, unix.Errno, bool) {
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	p, ok := g.pathOf(fdPath, st)
	if !ok || st.Mode&unix.S_IFMT != unix.S_IFREG || !ed.Private(parentOf(p)) || !g.ent.isMade(parentOf(p), st) {
		return 0, unix.EACCES, true
	}
	if len(g.ent.made) >= MaxMade {
		return 0, unix.ENOSPC, true
	}
	g.acting(n.path)
	if err := g.perform(func() error { return unix.Linkat(unix.AT_FDCWD, fdPath, n.dir, n.name, unix.AT_SYMLINK_FOLLOW) }); err != nil {
		return 0, errnoOf(err), true
	}
	g.ent.record(n.dirPath, n.name, st)
	return 0, 0, true
}

// parentOf is the directory of a clean absolute path ("/" for "/").
func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}
