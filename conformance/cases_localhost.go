package conformance

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// localhostServe serves HTTP on the loopback at a port the kernel picks
// and fetches it from the same sandbox: $1 the address.
const localhostServe = `serve() { python3 -c '
import http.server, socket, sys, threading, urllib.request
class S(http.server.HTTPServer):
    address_family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = S((sys.argv[1], 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=s.serve_forever, daemon=True).start()
h = sys.argv[1] if ":" not in sys.argv[1] else "[" + sys.argv[1] + "]"
assert urllib.request.urlopen("http://%s:%d/" % (h, s.server_address[1]), timeout=30).status == 200
' "$@" 2>/dev/null; }
serve 127.0.0.1 && ok SERVE4
if [ "$(cat /proc/sys/net/ipv6/conf/lo/disable_ipv6 2>/dev/null)" = 0 ]; then serve ::1 && ok SERVE6; else ok SERVE6; fi`

// localhostHost tries the host's listener on the loopback ($P) by every
// form of its address, and, as the work beside it, its own listener.
const localhostHost = `python3 -c '
import socket, sys
p = int(sys.argv[1])
for fam, a in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")):
    try:
        socket.socket(fam).connect((a, p)); print("@@" "TCP@@")
    except OSError:
        pass
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
socket.create_connection(s.getsockname()); s.accept(); print("@@" "OWN@@")
' "$P"`

// localhostListen listens on 127.0.0.1 at a port the kernel picks, says
// where in $W/port, and once $S exists writes how many connections it
// accepted to $W/accepted.
const localhostListen = `python3 -c '
import os, socket, sys, time
w, stop = sys.argv[1], sys.argv[2]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); s.setblocking(False)
open(w + "/port.tmp", "w").write(str(s.getsockname()[1])); os.rename(w + "/port.tmp", w + "/port")
n = 0
for _ in range(3000):
    try:
        s.accept(); n += 1
    except BlockingIOError:
        if os.path.exists(stop):
            break
        time.sleep(0.01)
open(w + "/accepted", "w").write(str(n))
' "$W" "$S" && ok LISTENED`

func localhostCases() []Case {
	return []Case{
		{Name: "work-localhost-server", Class: Work, Backends: linuxOnly, Needs: []string{"python3"},
			Summary: "with the network off, a Python http.server on 127.0.0.1 and ::1 at a port the kernel picks is fetched by urllib in the same sandbox (under landlock the loopback is the host's, held by the gate)",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, localhostServe)
				h.Expect(o, "SERVE4", "SERVE6")
			}},
		{Name: "work-localhost-node", Class: Work, Backends: linuxOnly, Needs: []string{"node"},
			Summary: "with the network off, node's http.createServer().listen(0) answers a request to localhost from the same sandbox",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `node -e '
const http = require("http");
const s = http.createServer((q, r) => r.end("ok")).listen(0, () => {
  http.get("http://localhost:" + s.address().port + "/", r => { r.resume(); r.on("end", () => { if (r.statusCode === 200) console.log("@@" + "NODE@@"); s.close(); }); })
    .on("error", e => { console.error(e.message); s.close(); });
});'`)
				h.Expect(o, "NODE")
			}},
		{Name: "net-loopback-host-service", Class: Network, Backends: linuxOnly, Needs: []string{"python3"},
			Summary: "with the network off, a host service on 127.0.0.1 (a database, an agent's proxy) accepts nothing from the sandbox, by IPv4 or the IPv4-mapped form, while the sandbox reaches its own listener",
			Run: func(h *H) {
				s := h.NetServer("127.0.0.1:0")
				_, p := h.ws()
				o := h.Sandbox(p, localhostHost, "P="+strconv.Itoa(s.Port))
				h.Refuse(o, "TCP")
				h.Expect(o, "OWN")
				h.Untouched(s, 0, o)
			}},
		{Name: "net-loopback-other-sandbox", Class: Network, Backends: linuxOnly, Needs: []string{"python3"},
			Summary: "with the network off, a second sandbox's listener on the loopback accepts nothing from the first (under landlock both are on the host's loopback), judged by what the listener accepted",
			Run: func(h *H) {
				w := h.Mkdir("a/run")
				stop := h.Path("stop")
				a := h.Background(h.Script(Policy{Workspace: h.Path("a")}, localhostListen, "W="+w, "S="+stop))
				for end := time.Now().Add(20 * time.Second); !h.Exists("a/run/port"); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(end) || h.ctx.Err() != nil {
						os.WriteFile(stop, nil, 0o644)
						h.Fatalf("the listening sandbox did not start:\n%s", a())
					}
				}
				port, _ := os.ReadFile(w + "/port")
				_, p := h.ws()
				o := h.Sandbox(p, localhostHost, "P="+strings.TrimSpace(string(port)))
				os.WriteFile(stop, nil, 0o644)
				oa := a()
				h.Expect(oa, "LISTENED")
				h.Refuse(o, "TCP")
				h.Expect(o, "OWN")
				if n, _ := os.ReadFile(w + "/accepted"); strings.TrimSpace(string(n)) != "0" {
					h.Errorf("host: the second sandbox's listener accepted %q connections:\n%s\n%s", n, o, oa)
				}
			}},
	}
}
