package bwrap

import "slices"

// The socket allowlists of the network modes and the blocks of the
// program that decide socket, socketpair and TCP Fast Open by them.

// refusedEACCES are the families that, when a mode leaves them out,
// answer EACCES, what a denied file answers: every Linux has them, so
// EAFNOSUPPORT ("this system has no Unix sockets", "no IPv4") sends a
// program or an agent down the wrong path (a fallback that cannot work,
// a report that the OS is broken) where the truth is that the sandbox
// refuses. Only families a mode leaves out reach this answer: one on the
// list is allowed before it. The others keep EAFNOSUPPORT on purpose,
// since programs take their fallback on it: AF_INET6, which programs
// probe to choose between IPv6 and IPv4 (a server listening on [::] or
// a resolver sorting addresses falls back to IPv4 only on
// EAFNOSUPPORT, and where IPv4 is refused too that then answers
// EACCES); AF_VSOCK, whose absence tells a guest agent or WSL's interop
// "not in a VM"; AF_ALG (crypto falls back to user space), AF_PACKET,
// Bluetooth, CAN and the rest, which many kernels lack. A netlink
// protocol off the list keeps EPROTONOSUPPORT for the same reason.
var refusedEACCES = []uint32{afUnix, afInet}

// Address families (linux/socket.h) and netlink protocols
// (linux/netlink.h) the allowlists and their tests name.
const (
	afUnix      = 1
	afInet      = 2
	afInet6     = 10
	afKey       = 15
	afNetlink   = 16
	afPacket    = 17
	afRds       = 21
	afCan       = 29
	afTipc      = 30
	afBluetooth = 31
	afAlg       = 38
	afVsock     = 40
	afXdp       = 44
	afMax       = 46 // the first family Linux does not know

	netlinkRoute         = 0
	ipprotoTCP           = 6 // IPPROTO_TCP (linux/in.h)
	sockStream           = 1 // SOCK_STREAM (linux/net.h)
	sockSeqpacket        = 5 // SOCK_SEQPACKET
	netlinkSockDiag      = 4
	netlinkAudit         = 9
	netlinkKobjectUevent = 15
	netlinkGeneric       = 16
)

var familyNames = map[uint32]string{
	afUnix: "AF_UNIX", afInet: "AF_INET", afInet6: "AF_INET6", afNetlink: "AF_NETLINK",
}

var netlinkNames = map[uint32]string{netlinkRoute: "NETLINK_ROUTE"}

// Sockets is one network mode's socket allowlist. A new mode (a proxy, an
// allowlisted network) is a new value of this type; the program needs no
// other change.
type Sockets struct {
	// Mode names the network mode in Describe.
	Mode string
	// Families are the address families socket(2) may create; any other
	// fails with EACCES or EAFNOSUPPORT (refusedEACCES).
	Families []uint32
	// Netlink are the protocols an AF_NETLINK socket may use (socket's
	// third argument), when AF_NETLINK is in Families; any other fails
	// with EPROTONOSUPPORT.
	Netlink []uint32
	// TCPOnly: AF_INET and AF_INET6 make TCP sockets only (SOCK_STREAM,
	// protocol 0 or IPPROTO_TCP); UDP, raw, SCTP and the rest fail with
	// EACCES, a refusal by policy, not a kernel without them. A sandbox
	// on the host's network whose one way out is a proxy (the landlock
	// backend with an allowlist) needs it: the supervisor judges each
	// TCP connect, Landlock's TCP rights back it, and nothing covers a
	// datagram.
	TCPOnly bool
	// UnixStreamOnly: AF_UNIX sockets, and socketpair's, are SOCK_STREAM
	// or SOCK_SEQPACKET only; SOCK_DGRAM fails with EACCES. A datagram
	// socket sends to any socket file its address names (sendto,
	// sendmsg, a connected socketpair's too: the kernel takes a named
	// target over the peer), past a supervisor that judges connect
	// (package gate, UnixRules), and Landlock up to ABI 7 checks none
	// of it; sendmsg's target is in memory the filter cannot read. Every
	// mode sets it.
	UnixStreamOnly bool
}

// AFUnix is AF_UNIX, for the packages that add it to Families.
const AFUnix = afUnix

var (
	// socketsOff is the network off: the sandbox has a network namespace
	// of its own with only loopback in it. AF_INET and AF_INET6 reach
	// nothing but the sandbox's own loopback, which tests and servers use.
	// NETLINK_ROUTE only reads and (without capabilities, it cannot
	// change) the sandbox's own interfaces and routes: glibc's getaddrinfo
	// (AI_ADDRCONFIG), getifaddrs, Go's net.Interfaces and 'ip' use it.
	// Other netlink protocols are not all confined by the namespace (audit,
	// kernel uevents, crypto, generic families) and no ordinary tool needs
	// them; 'ss' falls back to /proc/net without NETLINK_SOCK_DIAG.
	socketsOff = Sockets{Mode: "network off",
		Families: []uint32{afInet, afInet6, afNetlink}, Netlink: []uint32{netlinkRoute}, UnixStreamOnly: true}
	// socketsHost is the host's network: IP and NETLINK_ROUTE, and
	// nothing else (no AF_VSOCK, AF_PACKET, AF_ALG, Bluetooth, CAN...):
	// they are not what "network on" means to a user, and AF_VSOCK would
	// reach the hypervisor host past the host's firewall. No AF_UNIX
	// either: the host's network namespace is the host's abstract
	// sockets, and a read-only mount does not stop connect(2) to a
	// pathname one (docker.sock, an ssh-agent, D-Bus, tmux in /tmp);
	// socketpair stays, stream and seqpacket only (UnixStreamOnly: a
	// datagram one sends to any datagram socket a name reaches).
	socketsHost = Sockets{Mode: "network on",
		Families: []uint32{afInet, afInet6, afNetlink}, Netlink: []uint32{netlinkRoute}, UnixStreamOnly: true}
)

// socketsProxy is the network allowlist (a proxy outside): the sandbox's
// own network namespace as with the network off, where the proxy listens
// on loopback; the same families, and still no AF_UNIX.
var socketsProxy = Sockets{Mode: "network proxy",
	Families: []uint32{afInet, afInet6, afNetlink}, Netlink: []uint32{netlinkRoute}, UnixStreamOnly: true}

// SocketsProxy is the allowlist of a sandbox whose network is a proxy
// outside it, a copy the caller may change.
func SocketsProxy() Sockets {
	s := socketsProxy
	s.Families, s.Netlink = slices.Clone(s.Families), slices.Clone(s.Netlink)
	return s
}

// SocketsFor is the allowlist of the network on (the host's) or off, a
// copy the caller may change.
func SocketsFor(network bool) Sockets {
	s := socketsOff
	if network {
		s = socketsHost
	}
	s.Families, s.Netlink = slices.Clone(s.Families), slices.Clone(s.Netlink)
	return s
}

// msgFastopen is MSG_FASTOPEN (linux/socket.h).
const msgFastopen = 0x20000000

// SocketsTCPNoNamespace is the allowlist of a sandbox whose network is
// a proxy on the host's loopback, without a network namespace of its
// own (the landlock backend with an allowlist): TCP sockets, each
// connect decided by the supervisor, and NETLINK_ROUTE as with the
// network off; no AF_UNIX, no datagrams.
func SocketsTCPNoNamespace() Sockets {
	return Sockets{Mode: "network proxy, no network namespace",
		Families: []uint32{afInet, afInet6, afNetlink}, Netlink: []uint32{netlinkRoute}, TCPOnly: true, UnixStreamOnly: true}
}

// SocketsNoNamespace is the allowlist of a sandbox with the network off
// but no network namespace of its own (the landlock backend): AF_INET
// and AF_INET6 would reach the host's network, UDP included, which
// Landlock's TCP rules do not cover, and AF_UNIX the host's sockets; only
// NETLINK_ROUTE is left, which reads (without capabilities, cannot
// change) the interfaces, as getaddrinfo and getifaddrs expect to.
func SocketsNoNamespace() Sockets {
	return Sockets{Mode: "network off, no network namespace",
		Families: []uint32{afNetlink}, Netlink: []uint32{netlinkRoute}, UnixStreamOnly: true}
}

// SocketsHostNoUnix is the host's network without Unix sockets, for a
// sandbox with the network on but no mount namespace of its own (the
// landlock backend): Landlock (up to ABI 7) does not check connect(2) to
// a socket file, so a pathname socket anywhere on the host would be
// reachable, inside a denied root too (gpg-agent in ~/.gnupg, ssh
// ControlMaster sockets in ~/.ssh), as would docker.sock, the user's
// D-Bus, ssh-agent and X11. socketpair(AF_UNIX) stays.
func SocketsHostNoUnix() Sockets {
	return Sockets{Mode: "network on, no Unix sockets",
		Families: []uint32{afInet, afInet6, afNetlink}, Netlink: []uint32{netlinkRoute}, UnixStreamOnly: true}
}

// socketpair emits socketpair's block. It connects nothing outside, but
// only AF_UNIX needs it (the only other family implementing it, AF_TIPC,
// would load a module).
func (a *asm) socketpair(s Sockets, l func(string) string, ret func(uint32)) {
	a.label(l("socketpair"))
	a.emit(insn{code: bpfLdWAbs, k: offArg0})
	if s.UnixStreamOnly {
		a.emit(insn{code: bpfJeqK, k: afUnix, t: l("unixtype")})
		ret(retErrno | eafnosupport)
	} else {
		a.emit(insn{code: bpfJeqK, k: afUnix, jf: 1})
		ret(retAllow)
		ret(retErrno | eafnosupport)
	}
}

// socket emits socket's block: the families, AF_NETLINK last so that its
// jump is short, then what a family on the list may create.
func (a *asm) socket(s Sockets, l func(string) string, ret func(uint32)) {
	a.label(l("socket"))
	a.emit(insn{code: bpfLdWAbs, k: offArg0})
	for _, f := range s.Families {
		switch {
		case f == afUnix && s.UnixStreamOnly:
			a.emit(insn{code: bpfJeqK, k: f, t: l("unixtype")})
		case f != afNetlink:
			a.emit(insn{code: bpfJeqK, k: f, t: l("family")})
		}
	}
	if slices.Contains(s.Families, afNetlink) {
		a.emit(insn{code: bpfJeqK, k: afNetlink, t: l("netlink")})
	}
	eaccesFamilies := false
	for _, f := range refusedEACCES {
		if !slices.Contains(s.Families, f) {
			a.emit(insn{code: bpfJeqK, k: f, t: l("eaccesfamily")})
			eaccesFamilies = true
		}
	}
	ret(retErrno | eafnosupport)
	if eaccesFamilies {
		a.label(l("eaccesfamily"))
		ret(retErrno | eacces)
	}
	a.label(l("family"))
	if s.TCPOnly {
		// The type's low four bits are SOCK_STREAM (1); the rest are
		// SOCK_NONBLOCK and SOCK_CLOEXEC, or the kernel refuses them.
		a.emit(insn{code: bpfLdWAbs, k: offArg1})
		a.emit(insn{code: bpfJsetK, k: 0xe, t: l("socketeacces")})
		a.emit(insn{code: bpfJsetK, k: 0x1, f: l("socketeacces")})
		a.emit(insn{code: bpfLdWAbs, k: offArg2})
		a.emit(insn{code: bpfJeqK, k: 0, t: l("socketallow")})
		a.emit(insn{code: bpfJeqK, k: ipprotoTCP, t: l("socketallow")})
		a.label(l("socketeacces"))
		ret(retErrno | eacces)
		a.label(l("socketallow"))
	}
	ret(retAllow)
	if s.UnixStreamOnly {
		// socket's and socketpair's type, their second argument: its
		// low four bits SOCK_STREAM (1) or SOCK_SEQPACKET (5); the rest
		// are SOCK_NONBLOCK and SOCK_CLOEXEC.
		a.label(l("unixtype"))
		a.emit(insn{code: bpfLdWAbs, k: offArg1})
		a.emit(insn{code: bpfAluAndK, k: 0xf})
		a.emit(insn{code: bpfJeqK, k: sockStream, t: l("unixallow")})
		a.emit(insn{code: bpfJeqK, k: sockSeqpacket, t: l("unixallow")})
		ret(retErrno | eacces)
		a.label(l("unixallow"))
		ret(retAllow)
	}
}

// fastOpen emits the block of Rules.NoFastOpen. sendto's and sendmmsg's
// flags are their fourth argument, sendmsg's its third.
func (a *asm) fastOpen(l func(string) string, ret func(uint32)) {
	a.label(l("fastopen3"))
	a.emit(insn{code: bpfLdWAbs, k: offArg3})
	a.emit(insn{code: bpfJsetK, k: msgFastopen, t: l("fastopen"), f: l("fastopenallow")})
	a.label(l("fastopen2"))
	a.emit(insn{code: bpfLdWAbs, k: offArg2})
	a.emit(insn{code: bpfJsetK, k: msgFastopen, t: l("fastopen")})
	a.label(l("fastopenallow"))
	ret(retAllow)
	a.label(l("fastopen"))
	ret(retErrno | eopnotsupp)
}

// netlink emits the block of an AF_NETLINK socket: the protocols
// Sockets.Netlink lists.
func (a *asm) netlink(s Sockets, l func(string) string, ret func(uint32)) {
	a.label(l("netlink"))
	a.emit(insn{code: bpfLdWAbs, k: offArg2})
	for _, p := range s.Netlink {
		a.emit(insn{code: bpfJeqK, k: p, t: l("protocol")})
	}
	ret(retErrno | eprotonosupport)
	a.label(l("protocol"))
	ret(retAllow)
}
