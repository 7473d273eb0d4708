package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
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
	// The calls that read, answered with a value the launcher copies
	// into the caller's memory or a watch it adds on the caller's
	// inotify descriptor.
	opGetxattr
	opListxattr
	opWatch
)

// reads says the call reads metadata rather than changing it.
func (o op) reads() bool { return o >= opGetxattr }

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
		return -1, errors.New("gate: seccomp program: not a whole number of instructions")
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
		return -1, fmt.Errorf("gate: seccomp with a listener: %w", errno)
	}
	return int(fd), nil
}

// SendFd sends fds over the Unix socket sock (SCM_RIGHTS): the
// listener, and after it the native init's Landlock ruleset for the
// gate's wall thread (entry_wall_linux.go).
func SendFd(sock int, fds ...int) error {
	if err := unix.Sendmsg(sock, []byte{0}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("gate: send descriptor: %w", err)
	}
	return nil
}

// RecvFd receives the one descriptor SendFd sent on sock, close-on-exec.
// Anything else that arrives with it is closed.
func RecvFd(sock int) (int, error) {
	fds, err := RecvFds(sock, 1)
	if err != nil {
		return -1, err
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("gate: receive descriptor: got %d descriptors, want 1", len(fds))
	}
	return fds[0], nil
}

// RecvFds receives the descriptors SendFd sent on sock, close-on-exec:
// at least one, at most most (anything more, or a message cut short,
// is closed and refused).
func RecvFds(sock, most int) ([]int, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, flags, _, err := unix.Recvmsg(sock, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("gate: receive descriptor: %w", err)
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
	if len(fds) >= 1 && len(fds) <= most && flags&unix.MSG_CTRUNC == 0 {
		return fds, nil
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	return nil, fmt.Errorf("gate: receive descriptor: got %d descriptors, want 1 to %d", len(fds), most)
}

// Self is the identity of this process, which a sandbox of the landlock
// backend keeps (without capabilities).
func Self() (Identity, error) {
	gs, err := unix.Getgroups()
	if err != nil {
		return Identity{}, fmt.Errorf("gate: groups: %w", err)
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
		return fmt.Errorf("gate: pipe: %w", err)
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
	g := &gate{d: d, id: id, listener: listener, own: ownRoot(d), root: -1}
	g.socks.diag, g.socks.done = -1, make(chan unix.Errno)
	if g.own {
		g.socks.diag = rootedDiag(d)
	}
	defer g.socks.close()
	g.inet.diag = -1
	defer g.inet.close()
	defer g.ent.cleanMade()
	defer g.ent.closeStatus()
	defer g.closeWall()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}, {Fd: int32(p[0]), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("gate: poll: %w", err)
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
	ent      entryState // the entry gate's (entry_linux.go)
	socks    unixState  // the sandbox's own Unix sockets (unix_linux.go)
	inet     inetState  // the sandbox's own TCP listeners (inet_linux.go)
	// own: the sandbox has a root of its own (Rooted), root the
	// caller's, open for one request.
	own  bool
	root int
}

// ioctl is ioctl(2) on the listener, again when it was interrupted
// taking the listener's lock (EINTR: nothing done), so that a signal to
// this thread neither ends Serve (NOTIF_SEND) nor, by valid, leaves a
// caller waiting unanswered.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// one receives a notification and answers it.
func (g *gate) one() error {
	g.n = notif{} // the kernel refuses a buffer that is not zeroed
	if err := ioctl(g.listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&g.n)); err != nil {
		if err == unix.ENOENT || err == unix.EINTR {
			return nil // the caller was interrupted or died
		}
		return fmt.Errorf("gate: receive notification: %w", err)
	}
	g.ent.cont = false
	val, errno, ok := g.handle()
	if !ok {
		return nil
	}
	r := resp{id: g.n.id, val: val}
	switch {
	case g.ent.cont:
		r = resp{id: g.n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	case errno != 0:
		r = resp{id: g.n.id, error: -int32(errno)}
	}
	// ENOENT: the caller was interrupted (a signal) or is gone meanwhile.
	if err := ioctl(g.listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)); err != nil && err != unix.ENOENT {
		return fmt.Errorf("gate: answer notification: %w", err)
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
	if g.n.arch == auditArch && g.n.nr == unix.SYS_CONNECT {
		return g.connect() // a second kind of request: connect_linux.go
	}
	if g.n.arch == auditArch && g.n.nr == unix.SYS_BIND {
		return g.bind() // unix_linux.go
	}
	if g.n.arch == auditArch && g.n.nr == unix.SYS_LISTEN {
		return g.listen()
	}
	if ef, ok := entryForms[g.n.nr]; ok && g.n.arch == auditArch {
		return g.entry(ef)
	}
	f, known := forms[g.n.nr]
	if g.n.arch != auditArch || !known {
		return 0, unix.ENOSYS, true // the filter sends nothing else
	}
	c := call{form: f, pid: strconv.FormatUint(uint64(g.n.pid), 10), base: -1, inotify: -1, procFd: -1}
	if f.flags >= 0 {
		c.flags = int(int32(g.n.args[f.flags]))
	}
	mode := unix.O_RDONLY
	if f.op == opGetxattr || f.op == opListxattr {
		mode = unix.O_RDWR // the answer is copied into the caller's buffer
	}
	mem, err := unix.Open("/proc/"+c.pid+"/mem", mode|unix.O_CLOEXEC, 0)
	if err != nil {
		// Gone, or made itself undumpable: its own call fails, closed.
		return 0, unix.EPERM, g.valid()
	}
	defer unix.Close(mem)

	if e, ok := g.readPath(mem, &c); e != 0 {
		return 0, e, ok
	}
	e, ok := g.openBase(&c)
	if c.base >= 0 {
		defer unix.Close(c.base)
	}
	if e != 0 {
		return 0, e, ok
	}
	e, ok = g.readOperands(mem, &c)
	if c.inotify >= 0 {
		defer unix.Close(c.inotify)
	}
	if e != 0 {
		return 0, e, ok
	}
	if !g.valid() {
		return 0, 0, false
	}
	if c.op.reads() {
		val, e := g.actRead(&c, mem)
		return val, e, true
	}
	return 0, g.act(&c), true
}
