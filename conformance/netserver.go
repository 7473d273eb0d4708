package conformance

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NetServer is an HTTP server on the host standing in for the internet
// (these machines reach nothing else): it counts what reaches it, so a
// case judges by the host's side, not by what the sandbox printed. It
// answers one request per connection. (Plain HTTP/1.1 written out here:
// net/http would more than half again the size of the cordon binary
// that links this package, and the start of every launch.)
type NetServer struct {
	// Port is the port it listens on; Addr its address.
	Port int
	Addr string
	// Body is what GET / answers, unique per server.
	Body string

	mu   sync.Mutex
	hits int
	open int
	// flooded is the most GET /flood-head wrote on one connection.
	flooded int64
}

// FloodLimit is the most GET /flood-head writes: a response head without
// end, far past any bound cordon's proxy may hold.
const FloodLimit = 512 << 20

// NetServer starts an HTTP server on addr ("127.0.0.1:0", or ":0" for
// every interface of the host) until the case ends. GET /hold answers
// one line and then holds the connection open until the client or the
// server goes. GET /flood-head answers a header line without end, until
// the connection breaks or FloodLimit bytes (a hostile destination).
func (h *H) NetServer(addr string) *NetServer {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s := &NetServer{Port: port, Addr: ln.Addr().String(),
		Body: "cordon-net-" + h.Secret[len(h.Secret)-12:] + "-" + strconv.Itoa(port)}
	var conns sync.Map
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			s.mu.Lock()
			s.hits++ // a connection that sends nothing counts too
			s.open++
			s.mu.Unlock()
			go func() {
				defer func() {
					c.Close()
					conns.Delete(c)
					s.mu.Lock()
					s.open--
					s.mu.Unlock()
				}()
				tp := textproto.NewReader(bufio.NewReader(c))
				line, err := tp.ReadLine()
				if err != nil {
					return
				}
				if _, err := tp.ReadMIMEHeader(); err != nil {
					return
				}
				s.mu.Lock()
				s.hits++
				s.mu.Unlock()
				if f := strings.Fields(line); len(f) > 1 && f[1] == "/flood-head" {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Flood: ")
					chunk := []byte(strings.Repeat("a", 64<<10))
					c.SetWriteDeadline(time.Now().Add(2 * time.Minute))
					for n := 0; n < FloodLimit; {
						m, err := c.Write(chunk)
						n += m
						s.mu.Lock()
						s.flooded = max(s.flooded, int64(n))
						s.mu.Unlock()
						if err != nil {
							return
						}
					}
					return
				}
				if f := strings.Fields(line); len(f) > 1 && f[1] == "/hold" {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nholding\n")
					io.Copy(io.Discard, c) // until the client (or Cleanup) ends it
					return
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n", len(s.Body)+1, s.Body)
			}()
		}
	}()
	h.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
	})
	return s
}

// Hits is how many connections and requests reached the server.
func (s *NetServer) Hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Flooded is the most bytes GET /flood-head wrote on one connection.
func (s *NetServer) Flooded() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flooded
}

// Open is how many connections to it are open.
func (s *NetServer) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Untouched fails the case if anything reached s since it had hits
// before.
func (h *H) Untouched(s *NetServer, before int, o Output) {
	if n := s.Hits(); n != before {
		h.Errorf("host: the server on port %d was reached from inside the sandbox (%d connections and requests):\n%s", s.Port, n-before, o)
	}
}

// UDPServer counts the datagrams that reach a UDP port of the host.
func (h *H) UDPServer(addr string) (port int, count func() int) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	var mu sync.Mutex
	n := 0
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
		}
	}()
	h.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().(*net.UDPAddr).Port, func() int {
		time.Sleep(50 * time.Millisecond) // a datagram in flight
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// hostAddrs are the host's own addresses on every interface, loopback
// included, to connect to directly from inside.
func hostAddrs(port int) []string {
	var out []string
	ifs, _ := net.InterfaceAddrs()
	for _, a := range ifs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil {
			out = append(out, net.JoinHostPort(ip.IP.String(), strconv.Itoa(port)))
		}
	}
	return out
}

// nameservers are the DNS servers of /etc/resolv.conf, as HOST:53.
func nameservers() []string {
	b, _ := os.ReadFile("/etc/resolv.conf")
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, net.JoinHostPort(f[1], "53"))
		}
	}
	return out
}
