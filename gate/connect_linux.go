package gate

import (
	"encoding/binary"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// sockaddrMax is sizeof(struct sockaddr_storage): the longest address
// connect(2) accepts (EINVAL beyond).
const sockaddrMax = 128

// connectWait bounds how long the supervisor waits for a blocking
// connect to the proxy to complete. On loopback the kernel completes it
// at once while the proxy's accept queue has room; it waits only when
// the sandbox has filled that queue, and the supervisor, which serves
// one call at a time, must not wait with it for the kernel's minutes of
// SYN retries. The caller then gets ETIMEDOUT, as from a slow host.
const connectWait = 10 * time.Second

// connect decides a connect(2): a Unix socket to one of the sandbox's
// own (connectUnix), a netlink socket to the kernel, and a TCP socket
// only to the proxy or to one of the sandbox's own listeners on the
// loopback (connectOwn). The caller's socket is taken (pidfd_getfd: the
// same open socket, its O_NONBLOCK included) and its address read once
// into the supervisor's own copy; if that copy names the proxy, the
// supervisor connects the socket itself, to the proxy's address as the
// launcher knows it, so that an address the sandbox rewrites in its
// memory meanwhile reaches nothing (the kernel never reads it). The
// kernel is never asked to continue the call.
//
// A refusal is EACCES: what Landlock's own TCP connect check answers
// (the second wall, see landlock.Spec.ProxyPort), so both walls say the
// same, and, unlike ECONNREFUSED or ENETUNREACH, a program (and its
// user) can tell a policy's refusal from a host that is down. Refused:
// every destination but the proxy and the sandbox's own listeners,
// IPv6 ones but those in their IPv4-mapped form and ::1, and connect on
// an IP socket that is not TCP (a datagram socket handed in by the
// caller).
func (g *gate) connect() (int64, unix.Errno, bool) {
	var buf [sockaddrMax]byte
	s, e, ok := g.takeSock(buf[:])
	defer s.close()
	if e != 0 || !ok {
		return 0, e, ok
	}
	switch s.dom {
	case unix.AF_UNIX:
		return 0, g.connectUnix(&s), true
	case unix.AF_NETLINK:
		return 0, connectNetlink(&s), true
	}
	if g.own || hostNetwork(g.d) {
		// The sandbox's own network namespace, or the host's network
		// (HostNetwork): the address means what it means to the sandbox.
		return 0, ipRooted(&s), true
	}
	if !tcpOf(&s) {
		return 0, unix.EACCES, true
	}
	dest, unspec, e := parseSockaddr(s.dom, s.addr)
	if e != 0 {
		return 0, e, true
	}
	if unspec {
		// AF_UNSPEC disconnects the socket: it reaches nothing.
		var zero [16]byte
		return 0, rawConnect(s.sock, zero[:]), true
	}
	proxy, ok := proxyOf(g.d)
	if !ok || dest.Addr().Unmap() != proxy.Addr() || dest.Port() != proxy.Port() {
		return 0, g.connectOwn(&s, dest), true // inet_linux.go
	}
	if testhook.MetagateConnect != nil {
		testhook.MetagateConnect(int(g.n.pid), uintptr(g.n.args[1]))
	}
	return 0, connectProxy(s.sock, s.dom, proxy), true
}

// parseSockaddr reads a connect address for a TCP socket of family dom
// as the kernel checks it (net/ipv4/af_inet.c, tcp_v4_connect,
// tcp_v6_connect): AF_UNSPEC disconnects, a short address is EINVAL, a
// family not the socket's EAFNOSUPPORT. An IPv6 socket's IPv4-mapped
// address stays mapped here.
func parseSockaddr(dom int, b []byte) (netip.AddrPort, bool, unix.Errno) {
	if len(b) < 2 {
		return netip.AddrPort{}, false, unix.EINVAL
	}
	fam := int(binary.NativeEndian.Uint16(b))
	if fam == unix.AF_UNSPEC {
		return netip.AddrPort{}, true, 0
	}
	port := binary.BigEndian.Uint16(b[2:])
	switch dom {
	case unix.AF_INET:
		if len(b) < 16 {
			return netip.AddrPort{}, false, unix.EINVAL
		}
		if fam != unix.AF_INET {
			return netip.AddrPort{}, false, unix.EAFNOSUPPORT
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port), false, 0
	default:
		if len(b) < 24 { // SIN6_LEN_RFC2133
			return netip.AddrPort{}, false, unix.EINVAL
		}
		if fam != unix.AF_INET6 {
			return netip.AddrPort{}, false, unix.EAFNOSUPPORT
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), port), false, 0
	}
}

// connectProxy connects sock (the caller's, taken) to proxy (or to one
// of the sandbox's own listeners), from the supervisor's own address. A non-blocking socket answers as the kernel
// would (EINPROGRESS, then the caller polls and reads SO_ERROR as
// usual); a blocking one is connected without blocking the supervisor
// longer than connectWait.
func connectProxy(sock, dom int, proxy netip.AddrPort) unix.Errno {
	sa := sockaddrOf(dom, proxy) // inet_linux.go
	fl, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return errnoOf(err)
	}
	if fl&unix.O_NONBLOCK != 0 {
		return errnoOrZero(unix.Connect(sock, sa))
	}
	// The flag is the open socket's, which the caller shares; it is set
	// only for the moment of the connect, while the caller waits in it.
	if _, err := unix.FcntlInt(uintptr(sock), unix.F_SETFL, fl|unix.O_NONBLOCK); err != nil {
		return errnoOf(err)
	}
	err = unix.Connect(sock, sa)
	unix.FcntlInt(uintptr(sock), unix.F_SETFL, fl)
	if err != unix.EINPROGRESS {
		return errnoOrZero(err)
	}
	deadline := time.Now().Add(connectWait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return unix.ETIMEDOUT
		}
		fds := []unix.PollFd{{Fd: int32(sock), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR || err == nil && n == 0 {
			continue
		}
		if err != nil {
			return errnoOf(err)
		}
		soerr, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return errnoOf(err)
		}
		return unix.Errno(soerr)
	}
}

// rawConnect is connect(2) with an address as bytes (AF_UNSPEC, which
// x/sys/unix has no Sockaddr for).
func rawConnect(sock int, addr []byte) unix.Errno {
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
	return e
}

func errnoOrZero(err error) unix.Errno {
	if err == nil {
		return 0
	}
	return errnoOf(err)
}

// proxied is a Decider that names a proxy: Proxy, or one of the
// backend's own that decides more (the landlock backend's, which is an
// EntryDecider too).
type proxied interface{ ProxyAddr() netip.AddrPort }

// proxyOf is the proxy a Decider lets connects through to, if any.
func proxyOf(d Decider) (netip.AddrPort, bool) {
	p, ok := d.(proxied)
	if !ok || !p.ProxyAddr().IsValid() {
		return netip.AddrPort{}, false
	}
	return p.ProxyAddr(), true
}
