package gate

import (
	"net/netip"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// MaxOwnListeners bounds the record of the TCP sockets the sandbox
// listens on: past it, listening on another fails with ENOBUFS. It
// bounds, too, how many ports of the host's loopback a sandbox holds
// listening at once.
const MaxOwnListeners = 1024

// inetState is what the gate knows of the sandbox's own TCP listeners
// on the host's loopback (see inet.go).
type inetState struct {
	own  []uint64 // the listeners' cookies, which the kernel never gives twice
	diag int      // a NETLINK_SOCK_DIAG socket, opened at the first connect; -1: none yet
	seq  uint32
	buf  [1024]byte
}

func (s *inetState) close() {
	if s.diag >= 0 {
		unix.Close(s.diag)
	}
}

// tcpOf says whether the taken socket is an IP stream socket of TCP.
func tcpOf(s *sockCall) bool {
	return (s.dom == unix.AF_INET || s.dom == unix.AF_INET6) && s.typ == unix.SOCK_STREAM && s.proto == unix.IPPROTO_TCP
}

// bindInet binds a TCP socket from the supervisor's copy of the
// address: on the loopback only (a wildcard address is bound on the
// loopback of the socket's family: the sandbox serves its own clients,
// never the host's network), at a port the kernel picks (0) or one the
// user named (PortDecider). Anything else is EACCES, what Landlock's
// TCP bind check answers.
func (g *gate) bindInet(s *sockCall) unix.Errno {
	if !tcpOf(s) {
		return unix.EACCES
	}
	dest, unspec, e := parseSockaddr(s.dom, s.addr)
	if e != 0 {
		return e
	}
	if unspec {
		return unix.EAFNOSUPPORT
	}
	if dest.Port() != 0 && !portNamed(g.d, dest.Port()) {
		return unix.EACCES
	}
	a := dest.Addr()
	switch {
	case a == netip.IPv6Unspecified() && !v6only(s.sock):
		// Every interface in both families (Node's listen(0)): the
		// IPv4 loopback, which clients of "localhost" reach first, and
		// to which connectOwn sends those of ::1 too.
		a = netip.AddrFrom16(netip.AddrFrom4([4]byte{127, 0, 0, 1}).As16())
	case a.Unmap().IsUnspecified():
		a = loopbackOf(a)
	case !a.Unmap().IsLoopback():
		return unix.EACCES
	}
	return errnoOrZero(unix.Bind(s.sock, sockaddrOf(s.dom, netip.AddrPortFrom(a, dest.Port()))))
}

// loopbackOf is the loopback address in a's form: 127.0.0.1, its
// IPv4-mapped form, or ::1.
func loopbackOf(a netip.Addr) netip.Addr {
	lo4 := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	switch {
	case a.Is4():
		return lo4
	case a.Is4In6():
		return netip.AddrFrom16(lo4.As16())
	}
	return netip.IPv6Loopback()
}

// sockaddrOf is ap as an address of a socket of family dom (an IPv4
// address on an IPv6 socket in its mapped form).
func sockaddrOf(dom int, ap netip.AddrPort) unix.Sockaddr {
	if dom == unix.AF_INET6 {
		// As16 of an IPv4 address is its IPv4-mapped form.
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
}

// listenInet listens on a TCP socket the gate bound on the loopback
// (one never bound is first bound at a port the kernel picks on the
// loopback, not on every interface as listen(2) would), and records it,
// so that the sandbox's connects reach it.
func (g *gate) listenInet(sock, dom, backlog int) unix.Errno {
	sa, err := unix.Getsockname(sock)
	if err != nil {
		return errnoOf(err)
	}
	local, ok := addrOf(sa)
	if !ok {
		return unix.EACCES
	}
	if local.Port() == 0 {
		// Not bound: listen(2) would bind every interface.
		local = netip.AddrPortFrom(loopbackOf(local.Addr()), 0)
		if err := unix.Bind(sock, sockaddrOf(dom, local)); err != nil {
			return errnoOf(err)
		}
	} else if !local.Addr().Unmap().IsLoopback() {
		return unix.EACCES
	}
	cookie, err := unix.GetsockoptUint64(sock, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		return errnoOf(err)
	}
	if e := g.inet.room(); e != 0 {
		return e
	}
	if err := unix.Listen(sock, backlog); err != nil {
		return errnoOf(err)
	}
	g.inet.own = append(g.inet.own, cookie)
	return 0
}

// addrOf is a TCP socket's address.
func addrOf(sa unix.Sockaddr) (netip.AddrPort, bool) {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), true
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)), true
	}
	return netip.AddrPort{}, false
}

// room makes room in the record for one more listener, forgetting those
// no longer listening; ENOBUFS when every one is.
func (s *inetState) room() unix.Errno {
	if len(s.own) < MaxOwnListeners {
		return 0
	}
	s.own = slices.DeleteFunc(s.own, func(c uint64) bool { return !s.alive(c) })
	if len(s.own) >= MaxOwnListeners {
		return unix.ENOBUFS
	}
	return 0
}

// connectOwn connects a TCP socket to dest (the supervisor's copy) when
// the socket a connection to dest reaches, as the kernel looks it up now
// (its socket diagnostics), is one of the sandbox's own listeners; the
// connect is the supervisor's, from that copy. Anything else, a host
// service or another sandbox's listener on the same loopback included,
// is EACCES.
func (g *gate) connectOwn(s *sockCall, dest netip.AddrPort) unix.Errno {
	a := dest.Addr().Unmap()
	if !a.IsLoopback() || dest.Port() == 0 {
		return unix.EACCES
	}
	cookie, _, listening := g.inet.listenerAt(netip.AddrPortFrom(a, dest.Port()))
	if !listening && a == netip.IPv6Loopback() && s.dom == unix.AF_INET6 {
		// None on ::1: one bound on every interface (bindInet) listens
		// on the IPv4 loopback in the IPv4-mapped form.
		lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
		var fam uint8
		if cookie, fam, listening = g.inet.listenerAt(netip.AddrPortFrom(lo, dest.Port())); fam == unix.AF_INET6 {
			a = lo
		} else {
			listening = false
		}
	}
	if !listening || !g.inet.isOwn(cookie) {
		return unix.EACCES
	}
	if testhook.MetagateConnect != nil {
		testhook.MetagateConnect(int(g.n.pid), uintptr(g.n.args[1]))
	}
	return connectProxy(s.sock, s.dom, netip.AddrPortFrom(a, dest.Port()))
}

func (s *inetState) isOwn(cookie uint64) bool {
	for _, c := range s.own {
		if c == cookie {
			return true
		}
	}
	return false
}

// alive says whether the socket with cookie still listens, from a dump
// of the listeners the kernel knows (an exact question needs the
// socket's address, which the record does not keep); only room asks,
// when the record is full.
func (s *inetState) alive(cookie uint64) bool {
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		found := false
		s.ask(fam, netip.AddrPort{}, unix.NLM_F_DUMP, func(c uint64, _, state uint8) {
			if c == cookie && state == tcpListen {
				found = true
			}
		})
		if found {
			return true
		}
	}
	return false
}

// The kernel's socket diagnostics for TCP (linux/inet_diag.h).
const (
	tcpListen        = 10 // TCP_LISTEN
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	inetDiagMsgLen   = 72 // struct inet_diag_msg
	inetDiagCookie   = 4 + 40
	inetDiagNoCookie = ^uint32(0) // INET_DIAG_NOCOOKIE
)

// listenerAt asks the kernel which socket a connection to dest reaches
// now (inet_diag_find_one_icsk: the lookup an incoming SYN makes, with
// no cookie to match), and whether it listens.
func (s *inetState) listenerAt(dest netip.AddrPort) (cookie uint64, sockFam uint8, listening bool) {
	fam := uint8(unix.AF_INET6)
	if dest.Addr().Is4() {
		fam = unix.AF_INET
	}
	s.ask(fam, dest, 0, func(c uint64, f, state uint8) {
		cookie, sockFam, listening = c, f, state == tcpListen
	})
	return cookie, sockFam, listening
}

// v6only says whether an IPv6 socket is IPv6 only (IPV6_V6ONLY).
func v6only(sock int) bool {
	v, err := unix.GetsockoptInt(sock, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY)
	return err == nil && v != 0
}

// ask sends one inet_diag request for TCP sockets of family fam (the one
// at local address at, or, with NLM_F_DUMP, every listener) and calls
// each for every socket the answer names.
func (s *inetState) ask(fam uint8, at netip.AddrPort, flags uint16, each func(cookie uint64, fam, state uint8)) {
	if s.diag < 0 {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
		if err != nil {
			return
		}
		s.diag = fd
	}
	var req [16 + inetDiagReqLen]byte
	ne32 := func(b []byte, v uint32) { *(*uint32)(unsafe.Pointer(&b[0])) = v }
	ne32(req[0:], uint32(len(req)))
	*(*uint16)(unsafe.Pointer(&req[4])) = sockDiagByFamily
	*(*uint16)(unsafe.Pointer(&req[6])) = unix.NLM_F_REQUEST | flags
	s.seq++
	ne32(req[8:], s.seq)
	r := req[16:]
	r[0], r[1] = fam, unix.IPPROTO_TCP
	if flags&unix.NLM_F_DUMP != 0 {
		ne32(r[4:], 1<<tcpListen)
	} else {
		ne32(r[4:], ^uint32(0))
		id := r[8:]
		id[0], id[1] = byte(at.Port()>>8), byte(at.Port()) // idiag_sport, big-endian
		if fam == unix.AF_INET {
			a := at.Addr().As4()
			copy(id[4:], a[:])
		} else {
			a := at.Addr().As16()
			copy(id[4:], a[:])
		}
		ne32(id[40:], inetDiagNoCookie)
		ne32(id[44:], inetDiagNoCookie)
	}
	if err := unix.Sendto(s.diag, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return
	}
	for {
		n, _, err := unix.Recvfrom(s.diag, s.buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n < 16 {
			return
		}
		for b := s.buf[:n]; len(b) >= 16; {
			l := int(*(*uint32)(unsafe.Pointer(&b[0])))
			if l < 16 || l > len(b) {
				return
			}
			typ, seq := *(*uint16)(unsafe.Pointer(&b[4])), *(*uint32)(unsafe.Pointer(&b[8]))
			if seq == s.seq {
				switch {
				case typ == nlmsgError || typ == unix.NLMSG_DONE:
					return
				case l >= 16+inetDiagMsgLen:
					m := b[16:]
					c := m[inetDiagCookie:]
					each(uint64(*(*uint32)(unsafe.Pointer(&c[0])))|uint64(*(*uint32)(unsafe.Pointer(&c[4])))<<32, m[0], m[1])
					if flags&unix.NLM_F_DUMP == 0 {
						return
					}
				}
			}
			b = b[min((l+3)&^3, len(b)):]
		}
	}
}

// A PortDecider is a Decider that names the TCP ports the user let the
// sandbox bind besides the kernel's choice (port 0).
type PortDecider interface {
	MayBindPort(port uint16) bool
}

func portNamed(d Decider, port uint16) bool {
	p, ok := d.(PortDecider)
	return ok && p.MayBindPort(port)
}

// listenTCP decides listen(2) on an IP socket (listen's arguments: the
// socket, taken as sock, and the backlog): a TCP socket listens on the
// loopback (listenInet), any other is refused.
func (g *gate) listenTCP(sock, dom int) unix.Errno {
	typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return errnoOf(err)
	}
	proto, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return errnoOf(err)
	}
	if typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		return unix.EACCES
	}
	return g.listenInet(sock, dom, int(int32(g.n.args[1])))
}
