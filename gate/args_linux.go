package gate

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// call is one request as read from its caller: where its object is and
// the operands, all read before the pid is checked to still be the caller.
type call struct {
	form
	pid   string // the caller, for its /proc entries
	flags int    // the call's AT_* flags, 0 when it has none
	// self: the object is the descriptor (or working directory) itself;
	// rel: otherwise, the path the caller gave.
	self   bool
	rel    string
	follow bool
	base   int // the starting point opened, -1: none (an absolute path)
	// procFd is N when the path is the caller's own /proc/self/fd/N
	// (glibc before 2.39 makes fchmodat(AT_SYMLINK_NOFOLLOW) a chmod of
	// it): the call is then fchmod(N)'s; -1 otherwise.
	procFd int

	mode, uid, gid uint32
	name           string // the xattr name
	value          []byte // the xattr value
	xflags         int    // XATTR_CREATE / XATTR_REPLACE
	ts             *[2]unix.Timespec
	tsBuf          [2]unix.Timespec

	buf     uintptr // where a read's answer goes in the caller's memory
	size    uint64  // its size as the caller gave it
	inotify int     // the caller's inotify descriptor, taken; -1: none
	mask    uint32  // the watch's events
}

// readPath reads where the object is named: by descriptor, by an empty
// or NULL path meaning the descriptor, or by a path in the caller's
// memory. A nonzero errno ends the request, answered when ok.
func (g *gate) readPath(mem int, c *call) (errno unix.Errno, ok bool) {
	a := &g.n.args
	c.self = c.path < 0 // the call names its object by descriptor
	if !c.self {
		ptr := uintptr(a[c.path])
		switch {
		case ptr == 0 && c.nullPath && int32(a[c.dirfd]) != atFdcwd:
			if c.flags&^unix.AT_EMPTY_PATH != 0 {
				return unix.EINVAL, true
			}
			c.self = true
		case ptr == 0:
			return unix.EFAULT, true
		default:
			s, e := readString(mem, ptr, g.path[:])
			if e != 0 {
				return e, g.valid()
			}
			c.rel = s
		}
	}
	if c.form.flags >= 0 && c.flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL, true
	}
	c.follow = c.form.follow && c.flags&unix.AT_SYMLINK_NOFOLLOW == 0
	if n, ok := procSelfFd(c.rel); ok && c.follow && !c.self {
		c.self, c.procFd = true, n
	}
	if !c.self && c.rel == "" {
		if c.flags&unix.AT_EMPTY_PATH == 0 || c.form.flags < 0 {
			return unix.ENOENT, true
		}
		c.self = true
	}
	return 0, true
}

// readOperands reads the call's operands (mode, owner, xattr, times).
func (g *gate) readOperands(mem int, c *call) (errno unix.Errno, ok bool) {
	a := &g.n.args
	switch c.op {
	case opChmod:
		c.mode = uint32(a[c.arg]) & 0o7777
	case opChown:
		c.uid, c.gid = uint32(a[c.arg]), uint32(a[c.arg+1])
	case opSetxattr, opRemovexattr, opGetxattr:
		return g.readXattr(mem, c)
	case opListxattr:
		c.buf, c.size = uintptr(a[c.arg]), a[c.arg+1]
	case opWatch:
		return g.takeInotify(c)
	default:
		return g.readTimesArg(mem, c)
	}
	return 0, true
}

// readXattr reads an xattr name and, for setxattr, its value and flags.
func (g *gate) readXattr(mem int, c *call) (errno unix.Errno, ok bool) {
	a := &g.n.args
	s, e := readString(mem, uintptr(a[c.arg]), g.name[:])
	if e == unix.ENAMETOOLONG {
		e = unix.ERANGE
	}
	if e != 0 {
		return e, g.valid()
	}
	if s == "" {
		return unix.ERANGE, true
	}
	c.name = s
	if c.op == opGetxattr {
		c.buf, c.size = uintptr(a[c.arg+1]), a[c.arg+2]
		return 0, true
	}
	if c.op != opSetxattr {
		return 0, true
	}
	size := a[c.arg+2]
	if size > xattrSizeMax {
		return unix.E2BIG, true
	}
	c.xflags = int(int32(a[c.arg+3]))
	if c.xflags&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return unix.EINVAL, true
	}
	c.value = g.value[:size]
	if size > 0 {
		if e := readFull(mem, uintptr(a[c.arg+1]), c.value); e != 0 {
			return e, g.valid()
		}
	}
	return 0, true
}

// readTimesArg reads the times of the utime family; a NULL pointer (or
// both UTIME_NOW) leaves c.ts nil, meaning now.
func (g *gate) readTimesArg(mem int, c *call) (errno unix.Errno, ok bool) {
	ptr := uintptr(g.n.args[c.arg])
	if ptr == 0 {
		return 0, true
	}
	var e unix.Errno
	c.tsBuf, e = g.readTimes(mem, c.op, ptr)
	if e != 0 {
		return e, g.valid()
	}
	c.ts = &c.tsBuf
	if c.tsBuf[0].Nsec == utimeNow && c.tsBuf[1].Nsec == utimeNow {
		c.ts = nil // the kernel takes both UTIME_NOW as no times
	}
	return 0, true
}

// readTimes reads the times argument of o into timespecs, as the kernel
// validates them.
func (g *gate) readTimes(mem int, o op, ptr uintptr) ([2]unix.Timespec, unix.Errno) {
	var ts [2]unix.Timespec
	size := 32
	if o == opUtime {
		size = 16
	}
	b := g.times[:size]
	if e := readFull(mem, ptr, b); e != 0 {
		return ts, e
	}
	word := func(i int) int64 { return int64(uint64FromLE(b[8*i:])) }
	for i := range ts {
		switch o {
		case opUtime:
			ts[i] = unix.Timespec{Sec: word(i)}
		case opUtimes:
			usec := word(2*i + 1)
			if usec < 0 || usec >= 1e6 {
				return ts, unix.EINVAL
			}
			ts[i] = unix.Timespec{Sec: word(2 * i), Nsec: usec * 1000}
		default:
			ts[i] = unix.Timespec{Sec: word(2 * i), Nsec: word(2*i + 1)}
			if n := ts[i].Nsec; (n < 0 || n >= 1e9) && n != utimeNow && n != utimeOmit {
				return ts, unix.EINVAL
			}
		}
	}
	return ts, 0
}

func uint64FromLE(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// readString reads a NUL-terminated string of at most len(buf)-1 bytes at
// addr in the caller's memory, a page at a time (the string may end just
// before an unmapped page).
func readString(mem int, addr uintptr, buf []byte) (string, unix.Errno) {
	const page = 4096
	got := 0
	for got < len(buf) {
		n := page - int((addr+uintptr(got))%page)
		n = min(n, len(buf)-got)
		m, e := pread(mem, buf[got:got+n], addr+uintptr(got))
		if e != 0 {
			return "", e
		}
		if i := indexNUL(buf[got : got+m]); i >= 0 {
			return string(buf[:got+i]), 0
		}
		got += m
	}
	return "", unix.ENAMETOOLONG
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// readFull reads len(buf) bytes at addr in the caller's memory.
func readFull(mem int, addr uintptr, buf []byte) unix.Errno {
	for got := 0; got < len(buf); {
		m, e := pread(mem, buf[got:], addr+uintptr(got))
		if e != 0 {
			return e
		}
		got += m
	}
	return 0
}

// pread reads the caller's memory; an address it cannot read is EFAULT,
// what the kernel answers for a bad pointer.
func pread(mem int, b []byte, addr uintptr) (int, unix.Errno) {
	if int64(addr) < 0 {
		return 0, unix.EFAULT
	}
	n, err := unix.Pread(mem, b, int64(addr))
	if err != nil || n <= 0 {
		return 0, unix.EFAULT
	}
	return n, 0
}

// procSelfFd reports whether p is /proc/self/fd/N or
// /proc/thread-self/fd/N, the caller's own descriptor N, and N.
func procSelfFd(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/self/fd/")
	if !ok {
		if rest, ok = strings.CutPrefix(p, "/proc/thread-self/fd/"); !ok {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}
