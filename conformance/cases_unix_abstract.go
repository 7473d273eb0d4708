package conformance

import "strconv"

// A sandbox's own abstract Unix sockets (docs/threat-model.md, "Unix
// sockets"), with the network off and with an allowlist: a name the
// kernel picks (autobind) works on every Linux backend, a name the
// sandbox picks where the abstract namespace is its own (native and
// bwrap: its network namespace); under landlock, whose abstract
// namespace is the host's, a chosen name is refused (a host client
// would take it for its own service, as with a loopback port), and the
// gate with Landlock's abstract-socket scope behind it admits only the
// names the kernel picked for the sandbox's own sockets. A host
// process's abstract socket stays out of reach, judged by its listener.

// unixAbstractWork pairs a server and a client on an autobound name,
// then on a chosen one (argv[1]), then tries the host's (argv[2]).
const unixAbstractWork = `import socket, sys
def pair(name, mark):
    s = socket.socket(socket.AF_UNIX); s.bind(name); s.listen()
    c = socket.socket(socket.AF_UNIX); c.connect(s.getsockname()); a, _ = s.accept()
    c.sendall(b"hi")
    if a.recv(2) == b"hi":
        print("@@" + mark + "@@")
pair("", "AUTOBIND")
try:
    pair("\0" + sys.argv[1], "NAMED")
except OSError as e:
    print("named: %s" % e)
try:
    c = socket.socket(socket.AF_UNIX); c.settimeout(5); c.connect("\0" + sys.argv[2]); print("@@" + "HOST" + "@@")
except OSError:
    pass
`

func unixAbstractCases() []Case {
	var cases []Case
	for _, mode := range []string{"off", "allowlist"} {
		cases = append(cases, Case{Name: "unix-own-abstract-" + mode, Class: Network, Needs: []string{"python3"},
			Backends: linuxOnly,
			Summary: "network " + mode + ": a server and client on an abstract name the kernel picks work, and on one the sandbox picks where the namespace is its own (native, bwrap; refused under landlock); " +
				"a host process's abstract socket is refused",
			Run: func(h *H) {
				_, p := h.ws()
				if mode == "allowlist" {
					s := h.NetServer("127.0.0.1:0")
					p.AllowDomains = []string{"localhost:" + strconv.Itoa(s.Port)}
				}
				h.Write("ws/abstract.py", unixAbstractWork)
				tag := h.Secret[len(h.Secret)-12:]
				host := "cordon-conf-host-" + tag
				got := h.Listen("@" + host)
				o := h.Sandbox(p, `python3 abstract.py "$N" "$H"`, "N=cordon-conf-own-"+tag, "H="+host)
				h.Expect(o, "AUTOBIND")
				if h.Backend() == "landlock" {
					h.Refuse(o, "NAMED")
				} else {
					h.Expect(o, "NAMED")
				}
				h.Refuse(o, "HOST")
				if n := got(); n > 0 {
					h.Errorf("host: its abstract socket accepted %d connection(s) from inside the sandbox:\n%s", n, o)
				}
			}})
	}
	return cases
}
