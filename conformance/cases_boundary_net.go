package conformance

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Class 16, what cordon runs on the host for a sandbox: the network
// proxy against a hostile client inside (and a hostile destination the
// sandbox picks among the allowed ones). Judged by the host: the 'cordon
// run' process's peak memory, the size of its audit log and of what it
// printed, and how long it took to return once the command had ended.

// Bounds the cases assert: generous against what cordon holds (some 30
// MiB with the proxy) and far below what the attacks would make it hold
// without its bounds (hundreds of MiB, and 15 s or forever).
const (
	boundaryRSS     = 150 << 20
	boundaryAudit   = 2 << 20
	boundaryStderr  = 64 << 10
	boundaryReturn  = 5 * time.Second
	boundaryFloodMB = 400
)

func boundaryNetCases() []Case {
	allow := func(h *H, patterns ...string) Policy {
		_, p := h.ws()
		p.AllowDomains = patterns
		return p
	}
	local := func(s *NetServer) string { return "localhost:" + strconv.Itoa(s.Port) }
	var cases []Case
	for _, f := range []struct{ kind, summary string }{
		{"chunk-size", "a chunked request body whose chunk-size line never ends, through an allowed host"},
		{"trailer", "a chunked request body whose trailer line never ends"},
		{"header", "a request header line that never ends"},
		{"response-head", "an allowed destination that answers with a header line that never ends"},
	} {
		cases = append(cases, Case{Name: "boundary-proxy-endless-" + f.kind, Class: Boundary,
			Summary: f.summary + fmt.Sprintf(" (%d MiB of it): host-side cordon's memory stays under %d MiB", boundaryFloodMB, boundaryRSS>>20),
			Run: func(h *H) {
				needRusage(h)
				s := h.NetServer("127.0.0.1:0")
				o := h.Sandbox(allow(h, local(s)), `"$ATTACK" __attack proxy-flood `+f.kind+` localhost:$P `+strconv.Itoa(boundaryFloodMB),
					"P="+strconv.Itoa(s.Port))
				if o.MaxRSS > boundaryRSS {
					h.Errorf("host: cordon run grew to %d MiB (bound %d MiB) reading one line:\n%s", o.MaxRSS>>20, boundaryRSS>>20, o)
				}
				h.Refuse(o, "FLOODED")
				if f.kind == "response-head" && s.Flooded() >= FloodLimit {
					h.Errorf("host: the proxy read the destination's whole %d MiB head", FloodLimit>>20)
				}
			}})
	}
	return append(cases, []Case{
		{Name: "boundary-proxy-many-names", Class: Boundary,
			Summary: "300 CONNECTs, each for a unique refused name of 256 KiB starting with terminal control bytes: the audit log, cordon's stderr and its memory stay small, and no control byte reaches the terminal",
			Run: func(h *H) {
				needRusage(h)
				// 75 MiB of names through the proxy: about 20 s on a
				// loaded 2-core machine, over 30 s (the default limit)
				// under heavier load. The promise is about memory and
				// output, not time.
				h.LaunchTimeout = 3 * time.Minute
				s := h.NetServer("127.0.0.1:0")
				l := h.Script(allow(h, local(s)), `"$ATTACK" __attack proxy-names 300 262144`)
				l.Audit = h.Path("audit.jsonl")
				o := h.Launch(l)
				h.Expect(o, "REFUSED")
				fi, err := os.Stat(l.Audit)
				if err != nil {
					h.Fatalf("host: no audit log: %v\n%s", err, o)
				}
				if fi.Size() > boundaryAudit {
					h.Errorf("host: the audit log holds %d bytes after 300 refusals (bound %d)", fi.Size(), boundaryAudit)
				}
				if len(o.Stderr) > boundaryStderr {
					h.Errorf("host: cordon printed %d bytes on stderr (bound %d)", len(o.Stderr), boundaryStderr)
				}
				if o.MaxRSS > boundaryRSS {
					h.Errorf("host: cordon run grew to %d MiB (bound %d MiB)", o.MaxRSS>>20, boundaryRSS>>20)
				}
				for _, b := range []string{"\x1b", "\x07", "\x00"} {
					if strings.Contains(o.Stderr, b) {
						h.Errorf("host: cordon printed the control byte %q of a name on stderr:\n%q", b, clip(o.Stderr))
					}
				}
				if !strings.Contains(o.Stderr, `\x1bc\a\x00`) {
					h.Errorf("stderr does not name the refused hosts, escaped:\n%s", clip(o.Stderr))
				}
			}},
		{Name: "boundary-proxy-held-at-exit", Class: Boundary, Backends: linuxOnly,
			Summary: fmt.Sprintf("200 connections to the proxy held open when the command ends, half of them tunnels whose destination floods an answer the client never reads, half unfinished heads: cordon run stays under %d MiB, returns within %v, and no connection to the host outlives it", boundaryRSS>>20, boundaryReturn),
			Run: func(h *H) {
				needRusage(h)
				s := h.NetServer("127.0.0.1:0")
				_, p := h.ws()
				// Not the workspace's top, where the landlock backend
				// makes nothing.
				w := h.Mkdir("ws/run")
				p.AllowDomains = []string{local(s)}
				o := h.Sandbox(p, `"$ATTACK" __attack proxy-hold 200 localhost:$P "$W/held" &
i=0
while [ ! -e "$W/held" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
echo "@@DO""NE@@"
touch "$W/ended"`, "P="+strconv.Itoa(s.Port), "W="+w)
				h.Expect(o, "HOLDING")
				fi, err := os.Stat(w + "/ended")
				if err != nil {
					h.Fatalf("the command did not get to its end: %v\n%s", err, o)
				}
				if took := o.Ended.Sub(fi.ModTime()); took > boundaryReturn {
					h.Errorf("host: cordon run returned %v after the command ended (bound %v)\n%s", took.Round(time.Millisecond), boundaryReturn, o)
				}
				if o.MaxRSS > boundaryRSS {
					h.Errorf("host: cordon run grew to %d MiB (bound %d MiB)", o.MaxRSS>>20, boundaryRSS>>20)
				}
				if n := s.Open(); n > 0 {
					// Closed by cordon's end; the server's side sees it at once.
					for end := time.Now().Add(5 * time.Second); s.Open() > 0 && time.Now().Before(end); {
						time.Sleep(20 * time.Millisecond)
					}
					if n := s.Open(); n > 0 {
						h.Errorf("host: %d connections through the proxy are still open after cordon run returned", n)
					}
				}
				if f := s.Flooded(); f >= FloodLimit {
					h.Errorf("host: the proxy read the whole %d MiB a destination sent to a client that did not read", f>>20)
				}
			}},
		{Name: "boundary-proxy-dial-at-exit", Class: Boundary, Needs: []string{"curl"}, Backends: linuxOnly,
			Summary: fmt.Sprintf("a plain HTTP request whose connect to an allowed host is still in flight when the command ends: cordon run returns within %v", boundaryReturn),
			Run:     func(h *H) { dialAtExit(h, false) }},
		{Name: "boundary-proxy-sigterm-at-exit", Class: Boundary, Needs: []string{"curl"}, Backends: linuxOnly,
			Summary: fmt.Sprintf("the same, and SIGTERM sent to cordon run once the command has ended: cordon run ends within %v", boundaryReturn),
			Run:     func(h *H) { dialAtExit(h, true) }},
	}...)
}

// needRusage: only a 'cordon run' child has memory of its own to judge.
func needRusage(h *H) {
	if h.x.Name() != "cordon run" {
		h.NotApplicable("judged by the memory of a 'cordon run' process; the %s executor runs in this one", h.x.Name())
	}
}

// dialAtExit: the command asks the proxy for a host whose connect hangs
// (its listen queue is full: the SYN goes unanswered), waits until the
// host sees cordon's connect in flight, and ends. cordon must not wait
// for the connect, or for a response on it, before it returns; with
// signal, SIGTERM sent to cordon once the command has ended must end it.
func dialAtExit(h *H, signal bool) {
	port := h.stuckListener()
	_, p := h.ws()
	w := h.Mkdir("ws/run") // not the workspace's top, where the landlock backend makes nothing
	p.AllowDomains = []string{"localhost:" + strconv.Itoa(port)}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		// The host's side: once cordon's connect is in flight, the
		// command may end.
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			select {
			case <-stop:
				return
			default:
			}
			if synSent(port) {
				os.WriteFile(w+"/go", nil, 0o644)
				return
			}
		}
	}()
	l := h.Script(p, curlProxied+` "http://localhost:$P/" >/dev/null 2>&1 &
i=0
while [ ! -e "$W/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
[ -e "$W/go" ] && ok DIALLING
echo "@@DO""NE@@" # before the signal may come
touch "$W/ended"`, "P="+strconv.Itoa(port), "W="+w)
	if signal {
		l.Started = func(pid int) {
			go func() {
				for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
					select {
					case <-stop:
						return
					default:
					}
					if exists(w + "/ended") {
						syscall.Kill(pid, syscall.SIGTERM)
						return
					}
				}
			}()
		}
	}
	o := h.Launch(l)
	h.Expect(o, "DIALLING")
	fi, err := os.Stat(w + "/ended")
	if err != nil {
		h.Fatalf("the command did not get to its end: %v\n%s", err, o)
	}
	if took := o.Ended.Sub(fi.ModTime()); took > boundaryReturn {
		h.Errorf("host: cordon run returned %v after the command ended (bound %v)\n%s", took.Round(time.Millisecond), boundaryReturn, o)
	}
}
