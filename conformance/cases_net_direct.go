package conformance

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// More of class 15, for every Linux backend; under landlock the sandbox
// is on the host's network and each connect is decided by cordon
// (docs/threat-model.md, "Connections under the landlock backend").
func netDirectCases() []Case {
	allow := func(h *H, patterns ...string) Policy {
		_, p := h.ws()
		p.AllowDomains = patterns
		return p
	}
	local := func(s *NetServer) string { return "localhost:" + strconv.Itoa(s.Port) }
	return []Case{
		{Name: "net-direct-connect-v6", Class: Network, Backends: linuxOnly,
			Summary: "connect straight to a host server listening on IPv6 and IPv4 ([::]), by [::1] and by the IPv4-mapped [::ffff:127.0.0.1], past the proxy",
			Run: func(h *H) {
				ln, err := net.Listen("tcp6", "[::]:0")
				if err != nil {
					h.NotApplicable("this host has no IPv6 loopback to listen on: %v", err)
				}
				ln.Close()
				s := h.NetServer("[::]:0")
				allowed := h.NetServer("127.0.0.1:0")
				p := strconv.Itoa(s.Port)
				o := h.Sandbox(allow(h, local(allowed), local(s)), `"$ATTACK" __attack tcp [::1]:`+p+` [::ffff:127.0.0.1]:`+p)
				h.Refuse(o, "TCP")
				h.Untouched(s, 0, o)
			}},
		{Name: "net-listen-outside", Class: Network, Backends: linuxOnly,
			Summary: "a server the sandbox starts on every interface, at a port it asks for and at one the kernel picks (listen without bind), is not reachable from the host's side (its interfaces are its own namespace's under native and bwrap; under landlock the port asked for is refused and the kernel's is bound on the host's loopback only, where the host reaches it), while a request through the proxy still works",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				free, err := net.Listen("tcp", ":0")
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				port := free.Addr().(*net.TCPAddr).Port
				free.Close()
				_, p := h.ws()
				p.AllowDomains = []string{local(s)}
				w := h.Mkdir("ws/run") // not the workspace's top, where the landlock backend makes nothing
				reached := make(chan []string, 1)
				go func() {
					// The host's side: once the sandbox says where it
					// stands, connect to that port on every address.
					var got []string
					defer func() { os.WriteFile(w+"/done", nil, 0o644); reached <- got }()
					for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
						if _, err := os.Stat(w + "/state"); err == nil {
							break
						}
					}
					// The port asked for, and any the kernel picked.
					ports := []string{strconv.Itoa(port)}
					if b, err := os.ReadFile(w + "/state"); err == nil {
						ports = append(ports, strings.Fields(string(b))...)
					}
					for _, q := range ports {
						qn, _ := strconv.Atoi(q)
						for _, a := range append(hostAddrs(qn), net.JoinHostPort("::1", q)) {
							if c, err := net.DialTimeout("tcp", a, 2*time.Second); err == nil {
								c.Close()
								if h.Backend() == "landlock" && q != strconv.Itoa(port) && loopbackAt(a) {
									// The loopback is the host's: the sandbox's
									// listener at the port the kernel picked is
									// there, on no other address.
									continue
								}
								got = append(got, a)
							}
						}
					}
				}()
				o := h.Sandbox(p, `"$ATTACK" __attack listen $Q "$W/state" "$W/done"
`+fetch(viaHTTP, "localhost:$P"), "Q="+strconv.Itoa(port), "W="+w, "P="+strconv.Itoa(s.Port), "B="+s.Body)
				h.Expect(o, "HTTP")
				if got := <-reached; len(got) > 0 {
					h.Errorf("host: connected to the sandbox's server at %v:\n%s", got, o)
				}
			}},
		{Name: "net-audited", Class: Network, Needs: []string{"curl"},
			Summary: "with --audit, an allowed request through the proxy and a refused host (the same server under a name no pattern allows) are each a network record of the audit log, allowed and refused",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				l := h.Script(allow(h, local(s)), fetch(viaHTTP, "localhost:$P")+"\n"+fetch(viaCONNECT, "other.localhost:$P"),
					"P="+strconv.Itoa(s.Port), "B="+s.Body)
				l.Audit = h.Path("audit.jsonl")
				o := h.Launch(l)
				h.Expect(o, "HTTP")
				h.Refuse(o, "CONNECT")
				if s.Hits() == 0 {
					h.Errorf("host: nothing reached the allowed server:\n%s", o)
				}
				f, err := os.Open(l.Audit)
				if err != nil {
					h.Fatalf("host: no audit log: %v\n%s", err, o)
				}
				defer f.Close()
				got := map[string]bool{}
				sc := bufio.NewScanner(f)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for sc.Scan() {
					var line struct {
						Record struct {
							Kind string `json:"kind"`
							Data struct {
								Host    string `json:"host"`
								Allowed bool   `json:"allowed"`
							} `json:"data"`
						} `json:"record"`
					}
					if json.Unmarshal(sc.Bytes(), &line) == nil && line.Record.Kind == "network" {
						got[line.Record.Data.Host+" "+strconv.FormatBool(line.Record.Data.Allowed)] = true
					}
				}
				for _, want := range []string{"localhost true", "other.localhost false"} {
					if !got[want] {
						h.Errorf("host: the audit log has no network record %q (has %v)", want, keys(got))
					}
				}
			}},
	}
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

// loopbackAt says whether the host:port address a is on the loopback.
func loopbackAt(a string) bool {
	host, _, err := net.SplitHostPort(a)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}
