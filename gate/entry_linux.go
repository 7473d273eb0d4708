package gate

import (
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// entOp is one kind of call of the entry gate.
type entOp int

const (
	entOpen entOp = iota // open, openat, creat
	entMkdir
	entMknod
	entUnlink // unlinkat with AT_REMOVEDIR too
	entRmdir
	entRename
	entLink
	entSymlink
	entTruncate
)

// entryForm is where one call of the entry gate keeps its arguments
// (indexes into seccomp_data.args; -1: none; dirfd -1: AT_FDCWD).
type entryForm struct {
	op            entOp
	dirfd, path   int // the name the call makes, removes or opens (rename's and link's old one)
	flags, mode   int
	dirfd2, path2 int // rename's and link's new name
	arg           int // truncate's length, mknod's device, symlink's target
	creat         bool
}

// entryState is the entry gate's part of the gate: fixed buffers beside
// the gate's own, and how the request was answered.
type entryState struct {
	path2  [pathMax]byte
	target [pathMax]byte
	status [512]byte // the head of /proc/PID/status, for the umask
	// statusFd: the callers' /proc/PID/status kept open (readStatus).
	statusFd map[string]int
	link2    [pathMax]byte
	// cont: answer "continue" (the kernel performs the call).
	cont    bool
	locked  bool // the thread is locked, with its own umask
	hdr     unix.CapUserHeader
	caps    [2]unix.CapUserData
	dropped bool
	// made is what the sandbox made in private creation directories
	// (EntryDecider.Private), at most MaxMade.
	made []madeEntry
	// umask is the caller's for the call in flight (-1: it makes
	// nothing), for the wall thread (entry_wall_linux.go).
	umask int
	wall  wall
}

// madeEntry is a name the gate made, or linked, in a private creation
// directory, and the file it names.
type madeEntry struct {
	dir, name string
	dev, ino  uint64
	isDir     bool
}

// madeAt is the record of name in dir naming the file st is, or -1.
func (s *entryState) madeAt(dir, name string, st *unix.Stat_t) int {
	for i, m := range s.made {
		if m.dir == dir && m.name == name && m.dev == st.Dev && m.ino == st.Ino {
			return i
		}
	}
	return -1
}

// isMade says whether the file st is was made by the sandbox in dir.
func (s *entryState) isMade(dir string, st *unix.Stat_t) bool {
	for _, m := range s.made {
		if m.dir == dir && m.dev == st.Dev && m.ino == st.Ino {
			return true
		}
	}
	return false
}

func (s *entryState) record(dir, name string, st *unix.Stat_t) {
	s.made = append(s.made, madeEntry{dir: dir, name: name, dev: st.Dev, ino: st.Ino, isDir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
}

func (s *entryState) forget(i int) {
	s.made = append(s.made[:i], s.made[i+1:]...)
}

// cleanMade removes, once the sandbox is gone, the names it made in
// private creation directories that still name what it made, the last
// made first (what a directory it made holds before the directory; one
// that holds anything else stays). Nothing but the gate makes names
// there for the sandbox, and the gate is done.
func (s *entryState) cleanMade() {
	for _, m := range slices.Backward(s.made) {
		dir, err := unix.Open(m.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(dir, m.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Dev == m.dev && st.Ino == m.ino {
			flags := 0
			if m.isDir {
				flags = unix.AT_REMOVEDIR
			}
			unix.Unlinkat(dir, m.name, flags)
		}
		unix.Close(dir)
	}
	s.made = nil
}

const (
	// SECCOMP_IOCTL_NOTIF_ADDFD: _IOW('!', 3, struct seccomp_notif_addfd).
	notifAddfd = 0x40182103
	addfdSend  = 1 << 1 // SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)
	oTmpfile   = 0o20000000 | unix.O_DIRECTORY
	renameMask = unix.RENAME_NOREPLACE | unix.RENAME_EXCHANGE | unix.RENAME_WHITEOUT
)

// addfd is struct seccomp_notif_addfd.
type addfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// named is a name as the gate found it: the directory it is in, opened
// once, and the name in it.
type named struct {
	dir     int
	name    string
	path    string // the directory's path (links resolved) and the name
	dirPath string // the directory's path
	// slash: the caller's path ended in "/"; special: the name is "",
	// "." or "..", which makes no new name, or its directory is reached
	// through a magic link or on procfs, which the gate cannot resolve for
	// the caller: the kernel answers, Landlock checking.
	slash, special bool
}

// entryCall is one call of the entry gate as read from the caller: its
// flags, its names and where they start (-1: the path is absolute), and
// the caller's umask (-1: the call makes nothing with a mode).
type entryCall struct {
	pid         string
	flags       int
	rel, rel2   string
	target      string // symlink's
	umask       int
	base, base2 int
}

// closeStarts closes where the call's names start.
func (c *entryCall) closeStarts() {
	if c.base2 >= 0 {
		unix.Close(c.base2)
	}
	if c.base >= 0 {
		unix.Close(c.base)
	}
}

// entry decides one call of the entry gate. The paths, the umask and
// the starting points are read while the request is checked to be
// pending; the parent directories are resolved once, without the
// launcher's capabilities; the decision and the call are on them.
func (g *gate) entry(f entryForm) (int64, unix.Errno, bool) {
	ed, ok := g.d.(EntryDecider)
	if !ok {
		return 0, unix.ENOSYS, true // the filter was built without EntryRules
	}
	ed = g.withMadeDirs(ed)
	if e := g.ownThread(); e != 0 {
		return 0, e, true
	}
	c := entryCall{pid: strconv.FormatUint(uint64(g.n.pid), 10), flags: g.entryFlags(f), umask: -1, base: -1, base2: -1}
	if f.op == entOpen && (c.flags&unix.O_PATH != 0 || c.flags&oTmpfile == oTmpfile) {
		// Continuing is safe: O_PATH reads and writes nothing, and an
		// O_TMPFILE file has no name until a link the gate decides;
		// Landlock checks the open as it would without the gate. The
		// flags are the call's registers, not the caller's memory.
		g.ent.cont = true
		return 0, 0, true
	}
	if e, ok := g.readEntry(f, &c); e != 0 {
		return 0, e, ok
	}
	if g.own {
		if f.op == entUnlink || f.op == entRmdir || f.op == entTruncate {
			return 0, unix.ENOSYS, true // a Rooted sandbox's filter sends only the calls that make names
		}
		if e := g.openRoot(c.pid); e != 0 {
			return 0, e, g.valid()
		}
		defer g.closeRoot()
	}
	defer c.closeStarts()
	if e := g.entryStarts(f, &c); e != 0 {
		return 0, e, g.valid()
	}
	if !g.valid() {
		return 0, 0, false
	}
	return g.actEntry(ed, f, &c)
}

// entryFlags are the call's open, unlink, rename or link flags, from its
// registers (creat's are O_CREAT|O_WRONLY|O_TRUNC).
func (g *gate) entryFlags(f entryForm) int {
	flags := 0
	if f.flags >= 0 {
		flags = int(int32(g.n.args[f.flags]))
	}
	if f.creat {
		flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
	}
	return flags
}

// readEntry reads the call's names (and symlink's target) from the
// caller's memory, and its umask where the call makes something with a
// mode. ok is false when there is nobody to answer.
func (g *gate) readEntry(f entryForm, c *entryCall) (e unix.Errno, ok bool) {
	mem, err := unix.Open("/proc/"+c.pid+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return unix.EPERM, g.valid()
	}
	defer unix.Close(mem)
	a := &g.n.args
	if c.rel, e = readString(mem, uintptr(a[f.path]), g.path[:]); e != 0 {
		return e, g.valid()
	}
	if f.path2 >= 0 {
		if c.rel2, e = readString(mem, uintptr(a[f.path2]), g.ent.path2[:]); e != 0 {
			return e, g.valid()
		}
	}
	if f.op == entSymlink {
		if c.target, e = readString(mem, uintptr(a[f.arg]), g.ent.target[:]); e != 0 {
			return e, g.valid()
		}
		if c.target == "" {
			return unix.ENOENT, true
		}
	}
	emptyOld := f.op == entLink && c.rel == "" && c.flags&unix.AT_EMPTY_PATH != 0
	if (c.rel == "" && !emptyOld) || (f.path2 >= 0 && c.rel2 == "") {
		return unix.ENOENT, true
	}
	if f.op == entMkdir || f.op == entMknod || (f.op == entOpen && c.flags&unix.O_CREAT != 0) {
		if c.umask, e = g.umaskOf(c.pid); e != 0 {
			return e, g.valid()
		}
	}
	return 0, true
}

// entryStarts opens where the call's names start, and under a Rooted
// decider takes the caller's own magic links out of them (unmagic).
func (g *gate) entryStarts(f entryForm, c *entryCall) (e unix.Errno) {
	if c.base, c.rel, e = g.startAt(c.pid, f.dirfd, c.rel, g.link[:]); e != 0 {
		return e
	}
	if f.path2 >= 0 {
		if c.base2, c.rel2, e = g.startAt(c.pid, f.dirfd2, c.rel2, g.ent.link2[:]); e != 0 {
			return e
		}
	}
	if g.own && f.op != entOpen {
		c.rel, c.rel2, e = g.unmagicBoth(c.pid, f, c.rel, c.rel2)
	}
	return e
}

// actEntry decides and performs the call as the sandbox would: its
// capabilities (root's DAC override, CAP_FOWNER, CAP_MKNOD...) off on
// this thread, the caller's umask on it, so the kernel checks what it
// checks for the sandbox itself.
func (g *gate) actEntry(ed EntryDecider, f entryForm, c *entryCall) (int64, unix.Errno, bool) {
	if e := g.dropCaps(); e != 0 {
		return 0, e, true
	}
	defer g.restoreCaps()
	if c.umask >= 0 {
		unix.Umask(c.umask)
	}
	g.ent.umask = c.umask
	a := &g.n.args
	mode := uint32(0)
	if f.mode >= 0 {
		mode = uint32(a[f.mode])
	}
	switch f.op {
	case entOpen:
		if g.own {
			return g.openOwn(ed, c.pid, c.rel, c.flags, mode)
		}
		return g.open(ed, c.base, c.rel, c.flags, mode)
	case entMkdir, entMknod, entSymlink:
		return g.make(ed, f.op, c.base, c.rel, mode, a[max(f.arg, 0)], c.target)
	case entUnlink, entRmdir:
		flags := c.flags
		if f.op == entRmdir {
			flags = unix.AT_REMOVEDIR
		}
		return g.remove(ed, c.base, c.rel, flags)
	case entRename:
		return g.rename(ed, c.base, c.rel, c.base2, c.rel2, c.flags)
	case entLink:
		return g.hardlink(ed, c.base, c.rel, c.base2, c.rel2, c.flags)
	default:
		return g.truncate(ed, c.base, c.rel, int64(a[f.arg]))
	}
}

// cont answers that the kernel is to perform the call itself. Each
// caller says why that is safe where it continues: Landlock checks the
// call the kernel resolves again, and the plan never allows what the
// model refuses.
//
// Under a Rooted decider no wall checks again what the gate decided by a
// name read from the caller's memory, which another thread can rewrite
// meanwhile: the call is refused instead (nothing the gate serves there
// gets here).
func (g *gate) cont() (int64, unix.Errno, bool) {
	if g.own {
		return 0, unix.EACCES, true
	}
	g.ent.cont = true
	return 0, 0, true
}

// ownThread locks the serving goroutine to its thread and gives the
// thread a file-system context of its own, so that the caller's umask
// can be set on it alone. The goroutine never unlocks it: the thread
// ends with Serve.
func (g *gate) ownThread() unix.Errno {
	if g.ent.locked {
		return 0
	}
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return errnoOf(err)
	}
	g.ent.locked = true
	return 0
}

// dropCaps clears this thread's effective capabilities, keeping the
// permitted ones for restoreCaps.
func (g *gate) dropCaps() unix.Errno {
	s := &g.ent
	s.hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capget(&s.hdr, &s.caps[0]); err != nil {
		return errnoOf(err)
	}
	s.dropped = s.caps[0].Effective|s.caps[1].Effective != 0
	if !s.dropped {
		return 0
	}
	none := s.caps
	none[0].Effective, none[1].Effective = 0, 0
	if err := unix.Capset(&s.hdr, &none[0]); err != nil {
		s.dropped = false
		return unix.EPERM
	}
	return 0
}

func (g *gate) restoreCaps() {
	if g.ent.dropped {
		unix.Capset(&g.ent.hdr, &g.ent.caps[0])
		g.ent.dropped = false
	}
}

// umaskOf reads the caller's umask from /proc/PID/status.
func (g *gate) umaskOf(pid string) (int, unix.Errno) {
	n, ok := g.ent.readStatus(pid)
	if !ok {
		return 0, unix.EPERM
	}
	s := string(g.ent.status[:n])
	i := strings.Index(s, "\nUmask:\t")
	if i < 0 {
		return 0, unix.EPERM
	}
	s = s[i+len("\nUmask:\t"):]
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, unix.EPERM
	}
	return int(m & 0o777), 0
}

// maxStatus bounds the status files the gate keeps open.
const maxStatus = 64

// readStatus reads the head of the caller's /proc/PID/status into
// s.status. The file stays open for the caller's next call (an open of
// it costs more than the read, which the kernel makes afresh each
// time), at most maxStatus of them: it names the task it was opened for,
// and once that task is gone reads ESRCH, also when its number names
// another by then, which is opened again.
func (s *entryState) readStatus(pid string) (int, bool) {
	if fd, ok := s.statusFd[pid]; ok {
		if n, err := unix.Pread(fd, s.status[:], 0); err == nil && n > 0 {
			return n, true
		}
		unix.Close(fd)
		delete(s.statusFd, pid)
	}
	fd, err := unix.Open("/proc/"+pid+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := unix.Pread(fd, s.status[:], 0)
	if err != nil || n <= 0 {
		unix.Close(fd)
		return 0, false
	}
	if len(s.statusFd) >= maxStatus {
		s.closeStatus()
	}
	if s.statusFd == nil {
		s.statusFd = make(map[string]int, maxStatus)
	}
	s.statusFd[pid] = fd
	return n, true
}

// closeStatus closes the status files kept open, with Serve.
func (s *entryState) closeStatus() {
	for _, fd := range s.statusFd {
		unix.Close(fd)
	}
	clear(s.statusFd)
}

// startAt opens where a relative path starts: the caller's descriptor
// at args[idx], or its working directory. -1: the path is absolute (the
// sandbox shares the launcher's root), or made absolute in the caller's
// own root (Rooted; buf takes the directory's path).
func (g *gate) startAt(pid string, idx int, rel string, buf []byte) (int, string, unix.Errno) {
	if strings.HasPrefix(rel, "/") {
		return -1, rel, 0
	}
	if g.own && rel != "" {
		p, e := g.absolute(pid, idx, rel, buf)
		return -1, p, e
	}
	fd, e := g.openStart(pid, idx)
	return fd, rel, e
}

// openStart opens the caller's descriptor at args[idx], or its working
// directory.
func (g *gate) openStart(pid string, idx int) (int, unix.Errno) {
	where := "/proc/" + pid + "/cwd"
	if idx >= 0 {
		n := int32(g.n.args[idx])
		switch {
		case n == atFdcwd:
		case n < 0:
			return -1, unix.EBADF
		default:
			where = "/proc/" + pid + "/fd/" + strconv.Itoa(int(n))
		}
	}
	fd, err := unix.Open(where, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return -1, unix.EBADF // no such descriptor in the caller
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	return fd, 0
}
