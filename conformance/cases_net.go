package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Class 15: the network allowlist (docs/threat-model.md), on both
// backends. Servers on the
// host stand in for the internet: 127.0.0.1 of the host is not the
// sandbox's loopback, so a host server named by an exact pattern
// (localhost:PORT, which the proxy may connect to because the pattern
// names it) is reachable only through the proxy. Every case is judged by
// what reached the host's servers.

// curlProxied is curl through the proxy for every host (NO_PROXY names
// localhost, which is what these cases connect to through the proxy).
const curlProxied = `curl -sS -m 20 --noproxy ''`

// proxyWay is one way a client goes through the proxy: curl's flags for
// it, and the marker the script prints when the server's body came back.
type proxyWay struct{ marker, flags string }

var (
	viaHTTP    = proxyWay{"HTTP", ""}                       // an absolute-URI request
	viaCONNECT = proxyWay{"CONNECT", " --proxytunnel"}      // a CONNECT tunnel, as for https
	viaSOCKS   = proxyWay{"SOCKS", ` --proxy "$ALL_PROXY"`} // SOCKS5, the name resolved by the proxy
	proxyWays  = []proxyWay{viaHTTP, viaCONNECT, viaSOCKS}
)

// fetch is a script line that fetches http://target/ through the proxy
// by way w and prints w's marker if the body is $B.
func fetch(w proxyWay, target string) string {
	return curlProxied + w.flags + ` "http://` + target + `/" | grep -q "$B" && ok ` + w.marker
}

// fetchEach is a script fetching target by each of ways, a line each.
func fetchEach(target string, ways ...proxyWay) string {
	var b strings.Builder
	for _, w := range ways {
		b.WriteString("\n" + fetch(w, target))
	}
	return b.String()
}

// proxyVars are the variables the sandbox's proxy is named by.
var proxyVars = []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"}

func netCases() []Case {
	allow := func(h *H, patterns ...string) Policy {
		_, p := h.ws()
		p.AllowDomains = patterns
		return p
	}
	local := func(s *NetServer) string { return "localhost:" + strconv.Itoa(s.Port) }
	served := func(h *H, s *NetServer, o Output, marker string) {
		h.Expect(o, marker)
		if s.Hits() == 0 {
			h.Errorf("host: nothing reached the allowed server:\n%s", o)
		}
	}
	needCurl := []string{"curl"}
	var cases []Case
	for _, a := range []struct {
		name, summary string
		way           proxyWay
	}{
		{"net-allowed-http", "an allowed host (a host server named exactly, localhost:PORT) answers a plain HTTP request through the proxy (absolute-URI GET)", viaHTTP},
		{"net-allowed-connect", "an allowed host answers through a CONNECT tunnel (curl --proxytunnel, as for https)", viaCONNECT},
		{"net-allowed-socks5", "an allowed host answers through the proxy's SOCKS5 side, the name resolved by the proxy (ALL_PROXY=socks5h://)", viaSOCKS},
	} {
		cases = append(cases, Case{Name: a.name, Class: Network, Needs: needCurl, Summary: a.summary,
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(s)), fetch(a.way, "localhost:$P"), "P="+strconv.Itoa(s.Port), "B="+s.Body)
				served(h, s, o, a.way.marker)
			}})
	}
	return append(cases, []Case{
		{Name: "net-other-port", Class: Network, Needs: needCurl,
			Summary: "another port of the allowed host is refused, by HTTP, CONNECT and SOCKS5",
			Run: func(h *H) {
				s, other := h.NetServer("127.0.0.1:0"), h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(s)), fetchEach("localhost:$Q", proxyWays...),
					"Q="+strconv.Itoa(other.Port), "B="+other.Body)
				h.Refuse(o, "HTTP", "CONNECT", "SOCKS")
				h.Untouched(other, 0, o)
			}},
		{Name: "net-other-host", Class: Network, Needs: needCurl,
			Summary: "a host no pattern names is refused, and cordon names it and the flag that would allow it on stderr",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				// other.localhost is the same host server under a name no
				// pattern allows.
				o := h.Sandbox(allow(h, local(s)), fetchEach("other.localhost:$P", viaHTTP, viaCONNECT),
					"P="+strconv.Itoa(s.Port), "B="+s.Body)
				h.Refuse(o, "HTTP", "CONNECT")
				h.Untouched(s, 0, o)
				want := fmt.Sprintf("cordon: network: refused other.localhost:%d: no pattern allows it; to allow it: --allow-domain other.localhost:%d", s.Port, s.Port)
				if !strings.Contains(o.Stderr, want) {
					h.Errorf("stderr does not say %q:\n%s", want, o)
				}
			}},
		{Name: "net-ip-literal", Class: Network, Needs: needCurl,
			Summary: "the address an allowed name resolves to, asked for as an IP literal, is refused (names are matched as asked, never by address)",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				// SOCKS5 with the name resolved inside (socks5:, not
				// socks5h:) asks the proxy for the address.
				socksByAddress := proxyWay{"SOCKS", ` --proxy "$(echo "$ALL_PROXY" | sed 's/^socks5h:/socks5:/')"`}
				o := h.Sandbox(allow(h, local(s)), fetchEach("127.0.0.1:$P", viaHTTP, viaCONNECT)+fetchEach("localhost:$P", socksByAddress),
					"P="+strconv.Itoa(s.Port), "B="+s.Body)
				h.Refuse(o, "HTTP", "CONNECT", "SOCKS")
				h.Untouched(s, 0, o)
			}},
		{Name: "net-private-behind-name", Class: Network, Needs: needCurl,
			Summary: "a name allowed through a wildcard (*.localhost:PORT) that resolves to an internal address (loopback here; the LAN or 169.254.169.254 elsewhere) is refused",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, "*.localhost:"+strconv.Itoa(s.Port)), fetchEach("app.localhost:$P", proxyWays...),
					"P="+strconv.Itoa(s.Port), "B="+s.Body)
				h.Refuse(o, "HTTP", "CONNECT", "SOCKS")
				h.Untouched(s, 0, o)
				if !strings.Contains(o.Stderr, "loopback") {
					h.Errorf("stderr does not name the internal address:\n%s", o)
				}
			}},
		{Name: "net-direct-connect", Class: Network, Backends: linuxOnly,
			Summary: "connect straight to the host's addresses (every interface, loopback included), past the proxy (cordon __attack tcp)",
			Run: func(h *H) {
				s := h.NetServer(":0")
				allowed := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(allowed), local(s)), `"$ATTACK" __attack tcp `+strings.Join(hostAddrs(s.Port), " "))
				h.Refuse(o, "TCP")
				h.Untouched(s, 0, o)
			}},
		{Name: "net-no-proxy-vars", Class: Network, Needs: needCurl,
			Summary: "a client with the proxy variables removed (one that ignores them) reaches nothing, and fails rather than hangs",
			Run: func(h *H) {
				s := h.NetServer(":0")
				var urls []string
				for _, a := range append(hostAddrs(s.Port), "localhost:"+strconv.Itoa(s.Port)) {
					urls = append(urls, "http://"+a+"/")
				}
				o := h.Sandbox(allow(h, local(s)), `
for u in `+strings.Join(urls, " ")+`; do
  env -u `+strings.Join(proxyVars, " -u ")+` curl -sS -m 20 "$u" | grep -q "$B" && ok DIRECT
done
true`, "B="+s.Body)
				h.Refuse(o, "DIRECT")
				h.Untouched(s, 0, o)
			}},
		{Name: "net-dns", Class: Network, Backends: linuxOnly,
			Summary: "DNS inside resolves nothing: datagrams to the configured name servers and to the host go nowhere, lookups fail",
			Run: func(h *H) {
				port, count := h.UDPServer(":0")
				to := append(hostAddrs(port), nameservers()...)
				s := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(s)), `
"$ATTACK" __attack udp `+strings.Join(to, " ")+`
"$ATTACK" __attack resolve example.com cordon-probe.example.org`)
				h.Refuse(o, "RESOLVED")
				if n := count(); n > 0 {
					h.Errorf("host: %d datagrams from inside the sandbox reached the host:\n%s", n, o)
				}
			}},
		{Name: "net-unix-socket", Class: Network,
			Summary: "with an allowlist, connect to a host process's Unix socket reachable through a read-only mount (docker.sock, an ssh-agent): the proxy mode keeps Unix sockets refused",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				h.Mkdir("outside")
				sock := h.Path("outside/agent.sock")
				got := h.Listen(sock)
				o := h.Sandbox(allow(h, local(s)), `"$ATTACK" __attack connect "$S"`, "S="+sock)
				h.Refuse(o, "CONNECTED")
				if n := got(); n > 0 {
					h.Errorf("the host socket accepted %d connection(s) from inside the sandbox", n)
				}
			}},
		{Name: "net-socket-families", Class: Network, Backends: linuxOnly,
			Summary: "with an allowlist, socket() of every address family but IPv4, IPv6 and netlink (AF_UNIX, AF_PACKET, AF_VSOCK, AF_ALG...)",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(s)), `"$ATTACK" __attack socket `+strings.Join(familiesBut(withOwnUnix(h, false, []int{afInet, afInet6, afNetlink})...), " "))
				h.Refuse(o, "SOCKET")
			}},
		{Name: "net-nothing-left", Class: Network, Needs: needCurl,
			Summary: "a connection through the proxy held open by a background process, and the process, end with the sandbox: nothing of the proxy outlives cordon run",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				_, p := h.ws()
				w := h.Mkdir("ws/run") // not the workspace's top, where the landlock backend makes nothing
				p.AllowDomains = []string{local(s)}
				mark := fmt.Sprintf("86%06d.5", time.Now().UnixNano()%1000000)
				o := h.Sandbox(p, curlProxied+` -N "http://localhost:$P/hold" > "$W/hold" 2>&1 &
sleep "$M" &
i=0
while ! grep -q holding "$W/hold" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
grep -q holding "$W/hold" && ok HOLDING`, "P="+strconv.Itoa(s.Port), "W="+w, "M="+mark)
				h.Expect(o, "HOLDING")
				for end := time.Now().Add(10 * time.Second); s.Open() > 0 && time.Now().Before(end); {
					time.Sleep(20 * time.Millisecond)
				}
				if n := s.Open(); n > 0 {
					h.Errorf("host: %d connections through the proxy are still open after cordon run returned:\n%s", n, o)
				}
				if pids := processesWith(mark); len(pids) > 0 {
					h.Errorf("host: processes %v of the sandbox outlived it", pids)
				}
			}},
	}...)
}

// processesWith lists the processes whose command line holds s.
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, e.Name())
		}
	}
	return out
}
