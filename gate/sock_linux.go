package gate

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockCall is a bind or connect as read from its caller: its socket,
// taken (pidfd_getfd: the same open socket), the supervisor's own copy
// of the address, what the socket is, and, for a Unix socket, where a
// name the address gives starts.
type sockCall struct {
	pid             string
	sock            int
	addr            []byte
	dom, typ, proto int // typ and proto read for an IP socket only
	// root and cwd are the caller's root and working directory (O_PATH),
	// the one its name starts from opened, for an AF_UNIX socket only;
	// -1 otherwise.
	root, cwd int
	umask     int
	// abs is a connect's name made absolute in the caller's view, for
	// a sandbox with a root of its own (viewRooted).
	abs string
}

func (s *sockCall) close() {
	for _, fd := range []int{s.sock, s.root, s.cwd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// takeSock reads a bind's or a connect's arguments (fd, address,
// length): everything the decision needs is read while the request is
// checked to be pending; nothing after reads the caller's memory or
// descriptors again. A nonzero errno ends the request, answered when ok.
func (g *gate) takeSock(buf []byte) (s sockCall, errno unix.Errno, ok bool) {
	s = sockCall{sock: -1, root: -1, cwd: -1, umask: -1}
	a := &g.n.args
	fd, alen := int32(a[0]), int32(a[2])
	if fd < 0 {
		return s, unix.EBADF, true
	}
	if alen < 0 || alen > sockaddrMax {
		return s, unix.EINVAL, true
	}
	s.pid = strconv.FormatUint(uint64(g.n.pid), 10)
	pidfd, err := pidfdOpen(int(g.n.pid))
	if err != nil {
		return s, unix.EPERM, g.valid()
	}
	s.sock, err = unix.PidfdGetfd(pidfd, int(fd), 0)
	unix.Close(pidfd)
	if err != nil {
		s.sock = -1
		return s, errnoOf(err), g.valid()
	}
	s.addr = buf[:alen]
	if alen > 0 {
		if e := readVM(int(g.n.pid), uintptr(a[1]), s.addr); e != 0 {
			return s, e, g.valid()
		}
	}
	var errs [3]error
	s.dom, errs[0] = unix.GetsockoptInt(s.sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if errs[0] == nil && s.dom != unix.AF_UNIX && s.dom != unix.AF_NETLINK {
		// What only an IP socket's decision needs.
		s.typ, errs[1] = unix.GetsockoptInt(s.sock, unix.SOL_SOCKET, unix.SO_TYPE)
		s.proto, errs[2] = unix.GetsockoptInt(s.sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	}
	for _, err := range errs {
		if err != nil {
			return s, errnoOf(err), g.valid() // ENOTSOCK: not a socket
		}
	}
	if s.dom == unix.AF_UNIX {
		view := g.viewOf
		if g.own {
			view = g.viewRooted // native, bwrap: unix_rooted_linux.go
		}
		if e := view(&s); e != 0 {
			return s, e, g.valid()
		}
	}
	if !g.valid() {
		return s, 0, false
	}
	return s, 0, true
}

// readVM reads the caller's memory at addr into buf in one call
// (process_vm_readv: no /proc file opened, read and closed for a few
// bytes); an address the caller could not read itself is EFAULT, what
// the kernel answers for a bad pointer.
func readVM(pid int, addr uintptr, buf []byte) unix.Errno {
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: addr, Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	switch {
	case err == unix.EPERM || err == unix.ESRCH:
		return unix.EPERM
	case err != nil || n != len(buf):
		return unix.EFAULT
	}
	return 0
}

// viewOf opens the caller's root and working directory, where the name
// of a Unix socket is resolved, and reads its umask (a bind makes the
// socket file with it).
func (g *gate) viewOf(s *sockCall) unix.Errno {
	// Only the one a name starts from: the root for an absolute name,
	// the working directory for a relative one.
	where, fd := "/cwd", &s.cwd
	if len(s.addr) > 2 && s.addr[2] == '/' {
		where, fd = "/root", &s.root
	}
	if len(s.addr) > 2 && s.addr[2] != 0 {
		var err error
		if *fd, err = unix.Open("/proc/"+s.pid+where, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			*fd = -1
			return unix.EPERM
		}
	}
	if g.n.nr == unix.SYS_BIND {
		var e unix.Errno
		if s.umask, e = g.umaskOf(s.pid); e != 0 {
			return e
		}
	}
	return 0
}

// rawBind is bind(2) with an address as bytes.
func rawBind(sock int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(sock), uintptr(p), uintptr(len(addr)))
	return e
}

// The kernel's socket diagnostics for Unix sockets (linux/sock_diag.h,
// linux/unix_diag.h): asked about one socket by its inode and cookie,
// they say which inode it is bound to.
const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	udiagShowVFS     = 0x2
	unixDiagVFS      = 1 // UNIX_DIAG_VFS
	nlmsgError       = 2
)

// boundInode asks the kernel which inode the Unix socket with inode
// sino and cookie is bound to (its dev as the kernel keeps it, kdev, and
// the inode's low 32 bits, all the diagnostics carry). alive false: no such
// socket (closed, or the inode reused by another: the cookie differs).
func (u *unixState) boundInode(sino uint32, cookie uint64) (dev, ino uint32, bound, alive bool) {
	if u.diag < 0 {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return 0, 0, false, false
		}
		u.diag = fd
	}
	var req [16 + 24]byte
	ne := func(b []byte, v uint32) { *(*uint32)(unsafe.Pointer(&b[0])) = v }
	ne(req[0:], uint32(len(req)))
	*(*uint16)(unsafe.Pointer(&req[4])) = sockDiagByFamily
	*(*uint16)(unsafe.Pointer(&req[6])) = unix.NLM_F_REQUEST
	u.seq++
	ne(req[8:], u.seq)
	req[16] = unix.AF_UNIX
	ne(req[20:], ^uint32(0)) // every state
	ne(req[24:], sino)
	ne(req[28:], udiagShowVFS)
	ne(req[32:], uint32(cookie))
	ne(req[36:], uint32(cookie>>32))
	if err := unix.Sendto(u.diag, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, 0, false, false
	}
	for {
		n, _, err := unix.Recvfrom(u.diag, u.buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n < 16 {
			return 0, 0, false, false
		}
		b := u.buf[:n]
		if *(*uint32)(unsafe.Pointer(&b[8])) != u.seq {
			continue // an answer to an earlier question
		}
		if *(*uint16)(unsafe.Pointer(&b[4])) == nlmsgError || n < 32 {
			return 0, 0, false, false // ENOENT, ESTALE: gone
		}
		l := min(int(*(*uint32)(unsafe.Pointer(&b[0]))), n)
		for off := 32; off+4 <= l; {
			alen := int(*(*uint16)(unsafe.Pointer(&b[off])))
			if alen < 4 || off+alen > l {
				break
			}
			if *(*uint16)(unsafe.Pointer(&b[off+2])) == unixDiagVFS && alen >= 12 {
				return *(*uint32)(unsafe.Pointer(&b[off+8])), *(*uint32)(unsafe.Pointer(&b[off+4])), true, true
			}
			off += (alen + 3) &^ 3
		}
		return 0, 0, false, true
	}
}
