package gate

import (
	"net/netip"
	"slices"

	"github.com/cordon-sandbox/cordon/bwrap"
)

// A network allowlist without a network namespace (the landlock backend
// with --allow-domain): the sandbox is on the host's network, and its one
// way out must be cordon's proxy, which the launcher runs on the host's
// loopback. The filter sends every connect to the supervisor, which takes
// the caller's socket (pidfd_getfd), reads the address once and connects
// that socket itself, from its own copy, when the address is the proxy's;
// every other destination is refused (EACCES). See connect_linux.go.

// Proxy is a Decider that also lets a TCP connect through to Addr, the
// proxy of this launch (127.0.0.1 and its port). Serve decides connect
// only with a Proxy; ConnectRules sends it there.
type Proxy struct {
	Decider
	Addr netip.AddrPort
}

// ProxyAddr is the proxy p lets connects through to.
func (p Proxy) ProxyAddr() netip.AddrPort { return p.Addr }

// ConnectCalls are the calls ConnectRules hands to the supervisor.
var ConnectCalls = []string{"connect"}

// ConnectRules returns r (built with Rules) with connect handed to the
// supervisor as well, TCP Fast Open refused (a sendto or sendmsg with
// MSG_FASTOPEN connects without a connect(2)), and listen refused
// (EACCES): a socket listening on the host's network, which listen(2)
// binds to every interface at an ephemeral port without a bind(2) that
// Landlock would check, is a way in from outside. Its sockets must be
// bwrap.SocketsTCPNoNamespace: no datagram goes anywhere.
func ConnectRules(r bwrap.Rules) bwrap.Rules {
	r.Notify = append(slices.Clone(r.Notify), ConnectCalls...)
	r.NoFastOpen = true
	r.Refuse = append(slices.Clone(r.Refuse), bwrap.Refusal{Syscall: "listen", Errno: eacces})
	return r
}
