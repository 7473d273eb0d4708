package metagate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

const (
	sysFchmodat2 = 452
	idValidOld   = 0x80082102 // SECCOMP_IOCTL_NOTIF_ID_VALID_WRONG_DIR

	secSetModeFilter = 1 // SECCOMP_SET_MODE_FILTER
	atFdcwd          = -100
	utimeNow         = (1 << 30) - 1 // UTIME_NOW
	utimeOmit        = (1 << 30) - 2 // UTIME_OMIT
	xattrNameMax     = 255           // XATTR_NAME_MAX
	xattrSizeMax     = 65536         // XATTR_SIZE_MAX
	pathMax          = 4096          // PATH_MAX, with its NUL
)

type op int

const (
	opChmod op = iota
	opChown
	opSetxattr
	opRemovexattr
	opUtime     // struct utimbuf: seconds
	opUtimes    // struct timeval[2]
	opUtimensat // struct timespec[2]
)

// form is where one system call keeps its arguments (indexes into
// seccomp_data.args; -1: the call has none).
type form struct {
	op    op
	dirfd int // the descriptor (path -1: the object itself); -1: AT_FDCWD
	path  int
	arg   int // the first operand: mode, uid, xattr name, times
	flags int // AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH
	// follow: the call follows a link in the last component unless its
	// flags say AT_SYMLINK_NOFOLLOW; nullPath: a NULL path means the
	// descriptor (utimensat, futimesat).
	follow, nullPath bool
}

// notif and resp are struct seccomp_notif and seccomp_notif_resp
// (linux/seccomp.h), whose sizes the ioctl numbers encode.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type resp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Install loads prog (classic BPF, bwrap.Program built from Rules) on the
// calling thread, which must have no_new_privs set and be the one that
// execs the command (runtime.LockOSThread), and returns the listener of
// its notifications (close-on-exec). Only one filter in a process's chain
// may have a listener: under another supervisor this fails with EBUSY.
func Install(prog []byte) (int, error) {
	if len(prog) == 0 || len(prog)%8 != 0 {
		return -1, errors.New("metagate: seccomp program: not a whole number of instructions")
	}
	fprog := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
	// WAIT_KILLABLE_RECV (Linux 5.19): once the launcher has taken a
	// call, only a fatal signal interrupts the caller's wait, so a signal
	// (Go's preemption sends many) does not restart a call the launcher
	// already performed: an XATTR_CREATE done twice would answer EEXIST.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, secSetModeFilter, flags, uintptr(unsafe.Pointer(&fprog)))
	if errno == unix.EINVAL {
		fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, secSetModeFilter,
			unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	}
	if errno != 0 {
		return -1, fmt.Errorf("metagate: seccomp with a listener: %w", errno)
	}
	return int(fd), nil
}

// SendFd sends fd over the Unix socket sock (SCM_RIGHTS).
func SendFd(sock, fd int) error {
	if err := unix.Sendmsg(sock, []byte{0}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("metagate: send descriptor: %w", err)
	}
	return nil
}

// RecvFd receives the one descriptor SendFd sent on sock, close-on-exec.
// Anything else that arrives with it is closed.
func RecvFd(sock int) (int, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, flags, _, err := unix.Recvmsg(sock, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("metagate: receive descriptor: %w", err)
	}
	var fds []int
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(fds) == 1 && flags&unix.MSG_CTRUNC == 0 {
		return fds[0], nil
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	return -1, fmt.Errorf("metagate: receive descriptor: got %d descriptors, want 1", len(fds))
}

// Self is the identity of this process, which a sandbox of the landlock
// backend keeps (without capabilities).
func Self() (Identity, error) {
	gs, err := unix.Getgroups()
	if err != nil {
		return Identity{}, fmt.Errorf("metagate: groups: %w", err)
	}
	id := Identity{UID: uint32(os.Geteuid()), GID: uint32(unix.Getegid())}
	for _, g := range gs {
		id.Groups = append(id.Groups, uint32(g))
	}
	return id, nil
}

// Serve answers the listener's notifications, one at a time, until the
// sandbox is gone (every process of it has exited: it returns nil) or ctx
// is done (it returns ctx's error, and a call the sandbox makes after that
// fails with ENOSYS). It closes listener. Its memory is fixed: a sandbox
// that floods it only waits longer.
func Serve(ctx context.Context, listener int, d Decider, id Identity) error {
	defer unix.Close(listener)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return fmt.Errorf("metagate: pipe: %w", err)
	}
	defer unix.Close(p[0])
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
		case <-stop:
		}
		unix.Close(p[1])
	}()
	g := &gate{d: d, id: id, listener: listener}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("metagate: poll: %w", err)
		}
		if fds[1].Revents != 0 {
			return ctx.Err()
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return nil // no process is left under the filter
			}
			continue
		}
		if err := g.one(); err != nil {
			return err
		}
	}
}

// gate holds the one request in flight and its fixed buffers.
type gate struct {
	d        Decider
	id       Identity
	listener int
	n        notif
	path     [pathMax]byte
	name     [xattrNameMax + 1]byte
	value    [xattrSizeMax]byte
	times    [32]byte
	link     [pathMax]byte
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// one receives a notification and answers it.
func (g *gate) one() error {
	g.n = notif{} // the kernel refuses a buffer that is not zeroed
	if err := ioctl(g.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&g.n)); err != nil {
		if err == unix.ENOENT || err == unix.EINTR {
			return nil // the caller was interrupted or died
		}
		return fmt.Errorf("metagate: receive notification: %w", err)
	}
	val, errno, ok := g.handle()
	if !ok {
		return nil
	}
	r := resp{id: g.n.id, val: val}
	if errno != 0 {
		r = resp{id: g.n.id, error: -int32(errno)}
	}
	// ENOENT: the caller was interrupted (a signal) or is gone meanwhile.
	if err := ioctl(g.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)); err != nil && err != unix.ENOENT {
		return fmt.Errorf("metagate: answer notification: %w", err)
	}
	return nil
}

// valid says whether the notification is still pending: its caller has
// not died, so the pid names the same process as when it was opened.
func (g *gate) valid() bool {
	id := g.n.id
	err := ioctl(g.listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id))
	if err == unix.ENOTTY || err == unix.EINVAL {
		// Kernels before 5.9 know only the number with the wrong direction.
		err = ioctl(g.listener, idValidOld, unsafe.Pointer(&id))
	}
	return err == nil
}

// handle decides one call and performs it; ok false when there is
// nobody to answer.
func (g *gate) handle() (val int64, errno unix.Errno, ok bool) {
	f, known := forms[g.n.nr]
	if g.n.arch != auditArch || !known {
		return 0, unix.ENOSYS, true // the filter sends nothing else
	}
	pid := strconv.FormatUint(uint64(g.n.pid), 10)
	a := g.n.args
	flags := 0
	if f.flags >= 0 {
		flags = int(int32(a[f.flags]))
	}
	mem, err := unix.Open("/proc/"+pid+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		// Gone, or made itself undumpable: its own call fails, closed.
		return 0, unix.EPERM, g.valid()
	}
	defer unix.Close(mem)

	// The object's starting point: a descriptor of the caller, or its
	// working directory, opened (through the magic link) before the pid
	// is checked to still be the caller.
	var rel string
	self := f.path < 0 // the call names its object by descriptor
	if !self {
		ptr := uintptr(a[f.path])
		switch {
		case ptr == 0 && f.nullPath && int32(a[f.dirfd]) != atFdcwd:
			if flags&^unix.AT_EMPTY_PATH != 0 {
				return 0, unix.EINVAL, true
			}
			self = true
		case ptr == 0:
			return 0, unix.EFAULT, true
		default:
			s, e := readString(mem, ptr, g.path[:])
			if e != 0 {
				return 0, e, g.valid()
			}
			rel = s
		}
	}
	if f.flags >= 0 && flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return 0, unix.EINVAL, true
	}
	follow := f.follow && flags&unix.AT_SYMLINK_NOFOLLOW == 0
	if !self && rel == "" {
		if flags&unix.AT_EMPTY_PATH == 0 || f.flags < 0 {
			return 0, unix.ENOENT, true
		}
		self = true
	}
	var base int
	if self || !filepath.IsAbs(rel) {
		where := "/proc/" + pid + "/cwd"
		// AT_FDCWD is the working directory only where a path goes with
		// it; fchmod(AT_FDCWD) is a bad descriptor.
		if f.dirfd >= 0 && (f.path < 0 || int32(a[f.dirfd]) != atFdcwd) {
			n := int32(a[f.dirfd])
			if n < 0 {
				return 0, unix.EBADF, true
			}
			where = "/proc/" + pid + "/fd/" + strconv.Itoa(int(n))
		}
		base, err = unix.Open(where, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if err == unix.ENOENT {
				err = unix.EBADF // no such descriptor in the caller
			}
			return 0, errnoOf(err), g.valid()
		}
		defer unix.Close(base)
	}

	// The operands, read now, before the pid is checked.
	var mode, uid, gid uint32
	var name string
	var value []byte
	var xflags int
	var ts *[2]unix.Timespec
	var tsBuf [2]unix.Timespec
	switch f.op {
	case opChmod:
		mode = uint32(a[f.arg]) & 0o7777
	case opChown:
		uid, gid = uint32(a[f.arg]), uint32(a[f.arg+1])
	case opSetxattr, opRemovexattr:
		s, e := readString(mem, uintptr(a[f.arg]), g.name[:])
		if e == unix.ENAMETOOLONG {
			e = unix.ERANGE
		}
		if e != 0 {
			return 0, e, g.valid()
		}
		if s == "" {
			return 0, unix.ERANGE, true
		}
		name = s
		if f.op == opSetxattr {
			size := a[f.arg+2]
			if size > xattrSizeMax {
				return 0, unix.E2BIG, true
			}
			xflags = int(int32(a[f.arg+3]))
			if xflags&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
				return 0, unix.EINVAL, true
			}
			value = g.value[:size]
			if size > 0 {
				if e := readFull(mem, uintptr(a[f.arg+1]), value); e != 0 {
					return 0, e, g.valid()
				}
			}
		}
	default:
		if ptr := uintptr(a[f.arg]); ptr != 0 {
			var e unix.Errno
			tsBuf, e = g.readTimes(mem, f.op, ptr)
			if e != 0 {
				return 0, e, g.valid()
			}
			ts = &tsBuf
			if tsBuf[0].Nsec == utimeNow && tsBuf[1].Nsec == utimeNow {
				ts = nil // the kernel takes both UTIME_NOW as no times
			}
		}
	}
	if !g.valid() {
		return 0, 0, false
	}

	// Resolve the object once; everything after acts on this descriptor,
	// so a path swapped meanwhile changes nothing.
	obj := base
	if !self {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
		if !follow {
			how.Flags |= unix.O_NOFOLLOW
		}
		dir := base
		if filepath.IsAbs(rel) {
			dir = unix.AT_FDCWD // the sandbox shares the launcher's root
		}
		obj, err = unix.Openat2(dir, rel, &how)
		if err != nil {
			return 0, errnoOf(err), true
		}
		defer unix.Close(obj)
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return 0, errnoOf(err), true
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	denied := unix.EPERM
	if f.op >= opUtime {
		denied = unix.EACCES
	}
	where, ok := g.pathOf(fdPath, &st)
	if !ok || !g.d.MayChange(where, st.Mode&unix.S_IFMT == unix.S_IFDIR) {
		return 0, denied, true
	}
	if e := g.permitted(f.op, &st, fdPath, mode, uid, gid, name, ts); e != 0 {
		return 0, e, true
	}
	if testhook.MetagateAct != nil {
		testhook.MetagateAct(int(g.n.pid), where)
	}

	switch f.op {
	case opChmod:
		err = unix.Fchmodat(unix.AT_FDCWD, fdPath, mode, 0)
	case opChown:
		err = unix.Fchownat(obj, "", int(int32(uid)), int(int32(gid)), unix.AT_EMPTY_PATH)
	case opSetxattr:
		err = unix.Setxattr(fdPath, name, value, xflags)
	case opRemovexattr:
		err = unix.Removexattr(fdPath, name)
	default:
		err = utimensat(obj, ts)
	}
	if err != nil {
		return 0, errnoOf(err), true
	}
	return 0, 0, true
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

// permitted checks what the kernel would check for the sandbox's identity
// without capabilities (fs/attr.c, fs/xattr.c, fs/utimes.c): the launcher
// performing the call may have more rights than the sandbox.
func (g *gate) permitted(o op, st *unix.Stat_t, fdPath string, mode, uid, gid uint32, name string, ts *[2]unix.Timespec) unix.Errno {
	owner := st.Uid == g.id.UID
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	switch o {
	case opChmod:
		if isLink {
			return unix.EOPNOTSUPP // a link's mode cannot change
		}
		if !owner || mode&0o6000 != 0 {
			return unix.EPERM
		}
	case opChown:
		const keep = ^uint32(0)
		if uid != keep && (uid != st.Uid || !owner) {
			return unix.EPERM // only CAP_CHOWN gives a file away
		}
		if gid != keep && (!owner || (gid != st.Gid && !g.id.inGroup(gid))) {
			return unix.EPERM
		}
	case opSetxattr, opRemovexattr:
		if !strings.HasPrefix(name, "user.") {
			return unix.EPERM // trusted.* and security.* need capabilities
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			if st.Mode&unix.S_ISVTX != 0 && !owner {
				return unix.EPERM
			}
		default:
			return unix.EPERM
		}
		if !g.mayWrite(st, fdPath) {
			return unix.EACCES
		}
	default:
		if ts != nil {
			if !owner {
				return unix.EPERM // explicit times: the owner only
			}
		} else if !owner && !g.mayWrite(st, fdPath) {
			return unix.EACCES
		}
	}
	return 0
}

// mayWrite is the kernel's write permission for the sandbox by the mode's
// bits. An ACL may take away what the bits give (a named user's entry), so
// with one only the owner's class counts.
func (g *gate) mayWrite(st *unix.Stat_t, fdPath string) bool {
	switch {
	case st.Uid == g.id.UID:
		return st.Mode&0o200 != 0
	case hasACL(fdPath):
		return false
	case g.id.inGroup(st.Gid):
		return st.Mode&0o020 != 0
	default:
		return st.Mode&0o002 != 0
	}
}

func hasACL(fdPath string) bool {
	_, err := unix.Getxattr(fdPath, "system.posix_acl_access", nil)
	return err != unix.ENODATA && err != unix.EOPNOTSUPP
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

// utimensat sets the times of the object obj is (a link itself, when it
// is one), ts nil meaning now.
func utimensat(obj int, ts *[2]unix.Timespec) error {
	empty := [1]byte{}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(obj), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(ts)), unix.AT_EMPTY_PATH, 0, 0)
	if e != 0 {
		return e
	}
	return nil
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

// errnoOf is err's errno; anything else (none is expected) refuses.
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EPERM
}
