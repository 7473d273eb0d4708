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
// name swapped after the check, not another sandbox's. Abstract names
// are refused (only autobind is made): the host's abstract namespace is
// shared, and a name the sandbox chose would be a host client's service.
//
// sendto and sendmsg need no gate: no AF_UNIX datagram socket is made
// (bwrap.Sockets.UnixStreamOnly, socketpair too), and a stream socket
// refuses an address (EISCONN, EOPNOTSUPP) while a seqpacket one
// ignores it (net/unix/af_unix.c).

// UnixCalls are the calls UnixRules hands to the supervisor.
var UnixCalls = []string{"bind", "connect"}

// UnixRules returns r (built with Rules, and EntryRules: a bind makes a
// name) with AF_UNIX stream and seqpacket sockets allowed and bind and
// connect handed to the supervisor. The Decider must be an
// EntryDecider: it decides where a socket may be bound (MayEntry).
func UnixRules(r bwrap.Rules) bwrap.Rules {
	s := r.Sockets
	if !slices.Contains(s.Families, bwrap.AFUnix) {
		s.Families = append(slices.Clone(s.Families), bwrap.AFUnix)
	}
	s.UnixStreamOnly = true
	r.Sockets = s
	r.Notify = slices.Clone(r.Notify)
	for _, c := range UnixCalls {
		if !slices.Contains(r.Notify, c) {
			r.Notify = append(r.Notify, c)
		}
	}
	return r
}
