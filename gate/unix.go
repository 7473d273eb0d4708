package gate

import (
	"slices"

	"github.com/cordon-sandbox/cordon/bwrap"
)

// A sandbox's own Unix sockets (docs/design.md, "Unix sockets"): the
// filter lets it make AF_UNIX stream and seqpacket sockets and hands
// every bind and connect to the supervisor, which binds a pathname
// socket itself where the model lets the sandbox make the name, records
// which inode it bound (dev and inode, as the kernel's socket
// diagnostics report them for that socket), and connects a socket only
// to an inode it recorded, while the socket that bound it is alive,
// through the descriptor it pinned that inode with. Nothing else is
// reachable by name: not a socket a host process bound (in a read-only
// root, a writable one, /tmp, a denied root), not through a link or a
// name swapped after the check, not another sandbox's. An abstract
// name the sandbox chooses is refused (the host's abstract namespace is
// shared, and a name the sandbox chose would be a host client's
// service); a name the kernel picks (autobind) is recorded, and a
// connect reaches it while its socket lives (connectAbstract). With a
// network namespace of its own (RootedUnixRules) every abstract name is
// the sandbox's, and the gate connects to any from its own copy.
//
// sendto and sendmsg need no gate: no AF_UNIX datagram socket is made
// (bwrap.Sockets.UnixStreamOnly, socketpair too), and a stream socket
// refuses an address (EISCONN, EOPNOTSUPP) while a seqpacket one
// ignores it (net/unix/af_unix.c).

// A HostSockets Decider names the host's Unix sockets the user handed
// over (launcher.Cmd.UnixSockets) by their identity at launch: a
// connect whose name reaches one of those inodes, pinned, is admitted
// as one to the sandbox's own socket is, through the pin; a socket
// renamed over that name since is another inode and stays out.
type HostSockets interface {
	HostSocket(dev, ino uint64) bool
}

// A HostNetwork Decider's sandbox is on the host's network (--network
// on) and has Unix sockets through the gate only because the user
// handed some over: the gate then performs an IP socket's bind and
// connect as asked (the network is the host's), admits no abstract name
// a sandbox with a root of its own names (the host's network namespace
// is the host's abstract names), and, there, no socket bound in that
// namespace (which is the host's: its socket diagnostics would report
// every host process's socket as the sandbox's own).
type HostNetwork interface {
	HostNetwork() bool
}

// UnixCalls are the calls UnixRules hands to the supervisor.
var UnixCalls = []string{"bind", "connect"}

// UnixRules returns r (built with Rules, and EntryRules: a bind makes a
// name) with AF_UNIX stream and seqpacket sockets allowed and bind and
// connect handed to the supervisor, and listen too where ConnectRules
// refused it (the gate then listens on Unix sockets only). The Decider must be an
// EntryDecider: it decides where a socket may be bound (MayEntry).
func UnixRules(r bwrap.Rules) bwrap.Rules {
	s := r.Sockets
	if !slices.Contains(s.Families, bwrap.AFUnix) {
		s.Families = append(slices.Clone(s.Families), bwrap.AFUnix)
	}
	s.UnixStreamOnly = true
	r.Sockets = s
	r.Notify = slices.Clone(r.Notify)
	calls := UnixCalls
	if i := slices.IndexFunc(r.Refuse, func(f bwrap.Refusal) bool { return f.Syscall == "listen" }); i >= 0 {
		// ConnectRules refuses listen, which cannot be told by its
		// arguments from a TCP listen: the gate decides it instead.
		r.Refuse = slices.Delete(slices.Clone(r.Refuse), i, i+1)
		calls = append(slices.Clone(calls), "listen")
	}
	for _, c := range calls {
		if !slices.Contains(r.Notify, c) {
			r.Notify = append(r.Notify, c)
		}
	}
	return r
}

// RootedUnixRules returns r (a sandbox with a root and a network
// namespace of its own: native and bwrap with the network off or an
// allowlist) with AF_UNIX stream and seqpacket sockets allowed and
// connect handed to the supervisor. bind and listen stay the kernel's:
// the sandbox's mounts decide where a name is made, and a socket bound
// in the sandbox's network namespace is the sandbox's own, which is
// what the gate asks of the inode a connect names (UnixDiag).
func RootedUnixRules(r bwrap.Rules) bwrap.Rules {
	s := r.Sockets
	if !slices.Contains(s.Families, bwrap.AFUnix) {
		s.Families = append(slices.Clone(s.Families), bwrap.AFUnix)
	}
	s.UnixStreamOnly = true
	r.Sockets = s
	if !slices.Contains(r.Notify, "connect") {
		r.Notify = append(slices.Clone(r.Notify), "connect")
	}
	return r
}

// A ThreadRestricter is a Decider that can confine the calling thread as
// the sandbox is confined (the landlock backend: landlock.RestrictThread).
// Where the kernel's wall lets the sandbox make names (KernelAllows), the
// gate then binds a Unix socket by the caller's own name, from its own
// copy, on a thread so confined: that wall checks the name where the
// kernel resolves it, and the socket keeps the name its caller gave
// (getsockname, the peers' getpeername). Elsewhere, where the model
// alone lets it (a directory Landlock froze), and without one, the gate
// binds in the directory it resolved and decided, by the last name,
// which is then what getsockname reports.
type ThreadRestricter interface {
	RestrictThread() error
}
