package gate

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A sandbox with a root of its own (native, bwrap) has its own Unix
// sockets through the same gate: it binds and listens itself (its
// mounts decide where), and a connect's name resolves beneath its root
// (/proc/PID/root, RESOLVE_IN_ROOT), a relative one from its working
// directory as it sees it (made absolute in its view, so ".." stops at
// its root), and the socket diagnostics are asked in its network
// namespace, on a NETLINK_SOCK_DIAG socket made inside it and sent out
// with the listener (an unprivileged launcher cannot join that
// namespace: setns wants CAP_SYS_ADMIN in its own user namespace): the
// pinned inode must be one a socket of that namespace is bound to, and
// no host process's socket, nor another sandbox's, is in it.

// A UnixDiag is a Rooted Decider that holds the sandbox's own
// NETLINK_SOCK_DIAG socket (-1: none, and then every connect by name is
// refused).
type UnixDiag interface {
	SockDiag() int
}

// rootedDiag gives the gate its own copy of d's diagnostics socket.
func rootedDiag(d Decider) int {
	u, ok := d.(UnixDiag)
	if !ok || u.SockDiag() < 0 {
		return -1
	}
	fd, err := unix.FcntlInt(uintptr(u.SockDiag()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

// viewRooted opens the caller's root and makes the name absolute in
// its view (s.abs): what connect resolves beneath that root.
func (g *gate) viewRooted(s *sockCall) unix.Errno {
	if g.socks.diag < 0 {
		return unix.EACCES
	}
	var err error
	if s.root, err = unix.Open("/proc/"+s.pid+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		s.root = -1
		return unix.EPERM
	}
	name, autobind, abstract, e := unixName(s.addr)
	if e != 0 || autobind || abstract {
		return 0 // decided on the address alone
	}
	s.abs = name
	if name[0] != '/' {
		if s.abs, e = g.absolute(s.pid, -1, name, g.link[:]); e != 0 {
			return e
		}
	}
	return 0
}

// boundHere says whether a socket of the diagnostics socket's network
// namespace (the sandbox's own: no host process's socket is in it, nor
// another sandbox's) is bound to the inode dev, ino (its low 32 bits).
// The caller holds the inode pinned. The dump is read to its end, at
// most a page at a time.
func (u *unixState) boundHere(dev, ino uint32) bool {
	var req [16 + 24]byte
	ne := func(b []byte, v uint32) { *(*uint32)(unsafe.Pointer(&b[0])) = v }
	ne(req[0:], uint32(len(req)))
	*(*uint16)(unsafe.Pointer(&req[4])) = sockDiagByFamily
	*(*uint16)(unsafe.Pointer(&req[6])) = unix.NLM_F_REQUEST | unix.NLM_F_DUMP
	u.seq++
	ne(req[8:], u.seq)
	req[16] = unix.AF_UNIX
	ne(req[20:], ^uint32(0)) // every state
	ne(req[28:], udiagShowVFS)
	ne(req[32:], ^uint32(0)) // no cookie: every socket
	ne(req[36:], ^uint32(0))
	if err := unix.Sendto(u.diag, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false
	}
	found := false
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(u.diag, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		for b := buf[:n]; len(b) >= 16; {
			l := int(*(*uint32)(unsafe.Pointer(&b[0])))
			if l < 16 || l > len(b) {
				return false
			}
			typ := *(*uint16)(unsafe.Pointer(&b[4]))
			seq := *(*uint32)(unsafe.Pointer(&b[8]))
			switch {
			case seq != u.seq:
			case typ == unix.NLMSG_DONE:
				return found
			case typ == nlmsgError:
				return false
			case vfsIs(b[:l], dev, ino):
				found = true
			}
			b = b[min((l+3)&^3, len(b)):]
		}
	}
}

// vfsIs says whether one unix_diag_msg's UNIX_DIAG_VFS names dev, ino.
func vfsIs(m []byte, dev, ino uint32) bool {
	for off := 32; off+4 <= len(m); {
		alen := int(*(*uint16)(unsafe.Pointer(&m[off])))
		if alen < 4 || off+alen > len(m) {
			return false
		}
		if *(*uint16)(unsafe.Pointer(&m[off+2])) == unixDiagVFS && alen >= 12 {
			return *(*uint32)(unsafe.Pointer(&m[off+4])) == ino && *(*uint32)(unsafe.Pointer(&m[off+8])) == dev
		}
		off += (alen + 3) &^ 3
	}
	return false
}

// ipRooted performs an IP socket's connect for a sandbox with a network
// namespace of its own (RootedUnixRules sends every connect), from the
// gate's copy of the address: the socket is the sandbox's, made in its
// namespace, so the address means there what it means to the sandbox
// (its loopback, the proxy). The kernel is never left to continue the
// call: the descriptor could name a Unix socket by then.
func ipRooted(s *sockCall) unix.Errno {
	return connectBounded(s.sock, func() unix.Errno { return rawConnect(s.sock, s.addr) })
}
