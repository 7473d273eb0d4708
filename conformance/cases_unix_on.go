package conformance

import (
	"net"
	"os"
	"strconv"
	"time"
)

// With --network on the sandbox has the host's network, which is IP: no
// host Unix socket is reachable on any backend (docs/threat-model.md,
// "Unix sockets"), judged by the host's listeners, while the network
// itself and socketpair work.

// unixOnWork connects to the host's TCP server named in argv[1] (the
// network on reaches it), makes a socketpair, and tries each host Unix
// socket after it (argv[2:]; a name starting with "@" is abstract),
// each of which must be refused, and sends a datagram to the host's
// datagram socket named in $D from a socketpair, which must be refused
// too (a datagram socketpair's named target wins over its peer).
const unixOnWork = `import os, socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
c.close(); print("@@" + "TCP" + "@@")
a, b = socket.socketpair(); a.sendall(b"p")
if b.recv(1) == b"p":
    print("@@" + "PAIR" + "@@")
for i, h in enumerate(sys.argv[2:]):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect("\0" + h[1:] if h.startswith("@") else h); print("@@" + "HOST%d" % i + "@@")
    except OSError:
        pass
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); a.sendto(b"d", os.environ["D"]); print("@@" + "DGRAM" + "@@")
except OSError:
    pass
`

func unixOnCases() []Case {
	return []Case{{Name: "unix-host-sockets-network-on", Class: Network, Needs: []string{"python3"}, Backends: linuxOnly,
		Summary: "network on: a TCP connection to a host server and a socketpair work; a host process's socket in the writable workspace, one outside, one in /tmp, a link to one, an abstract one, and a datagram sent to one from a socketpair are refused",
		Run: func(h *H) {
			_, p := h.ws()
			p.Network = true
			s := h.NetServer("127.0.0.1:0")
			h.Mkdir("ws/run")
			h.Mkdir("outside")
			h.Write("ws/unixon.py", unixOnWork)
			tmp := "/tmp/cordon-conf-" + h.Secret[len(h.Secret)-12:] + ".sock"
			abstract := "@cordon-conf-" + h.Secret[len(h.Secret)-12:]
			names := []string{h.Path("ws/run/host.sock"), h.Path("outside/agent.sock"), tmp}
			var got []func() int
			for _, n := range names {
				got = append(got, h.Listen(n))
				// Open to every user, so that nothing but the sandbox's
				// walls can refuse the connect (the suite's own user is
				// not the one that listens).
				if err := os.Chmod(n, 0o777); err != nil {
					h.Fatalf("fixture: %v", err)
				}
			}
			h.Cleanup(func() { os.Remove(tmp) })
			got = append(got, h.Listen(abstract))
			dgram := h.Path("ws/run/log.sock") // the workspace: visible on every backend
			dl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
			if err != nil {
				h.Fatalf("fixture: %v", err)
			}
			h.Cleanup(func() { dl.Close() })
			if err := os.Chmod(dgram, 0o777); err != nil {
				h.Fatalf("fixture: %v", err)
			}
			o := h.Sandbox(p, `ln -s "$O" run/agent.link
python3 unixon.py "$P" "$W" "$O" "$T" run/agent.link "$A"`,
				"P="+strconv.Itoa(s.Port), "W="+names[0], "O="+names[1], "T="+tmp, "A="+abstract, "D="+dgram)
			h.Expect(o, "TCP", "PAIR")
			h.Refuse(o, "HOST0", "HOST1", "HOST2", "HOST3", "HOST4", "DGRAM")
			// A datagram sent is queued before sendto returns: the
			// sandbox has ended, so reading without waiting is exact.
			dl.SetReadDeadline(time.Now())
			if n, _, err := dl.ReadFrom(make([]byte, 16)); err == nil {
				h.Errorf("host: its datagram socket received %d byte(s) from inside the sandbox:\n%s", n, o)
			}
			n := 0
			for _, f := range got {
				n += f()
			}
			if n > 0 {
				h.Errorf("host: its sockets accepted %d connection(s) from inside the sandbox:\n%s", n, o)
			}
		}}}
}
