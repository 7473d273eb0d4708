package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hostile clients and destinations: each test bounds its own loops and
// ends by itself. What is judged is what the proxy read (a client or a
// server that could go on writing was cut off) and how long Close took.

// floodLimit is how much a hostile peer writes at most before the test
// decides the proxy went on reading: far past every bound of the proxy.
const floodLimit = 64 << 20

// flood writes endless bytes of b to c until a write fails or limit
// bytes are written; it returns how many were written.
func flood(c net.Conn, b byte, limit int) int {
	chunk := bytes.Repeat([]byte{b}, 64<<10)
	n := 0
	c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	for n < limit {
		m, err := c.Write(chunk)
		n += m
		if err != nil {
			break
		}
	}
	return n
}

// hostileUpstream is a destination on loopback that runs serve on each
// connection; its connections end with the test.
func hostileUpstream(t *testing.T, serve func(c net.Conn)) int {
	return hostileUpstreamOn(t, 0, serve)
}

func hostileUpstreamOn(t *testing.T, port int, serve func(c net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// readHead reads an HTTP head from c.
func readHead(c net.Conn) *bufio.Reader {
	br := bufio.NewReader(c)
	for {
		l, err := br.ReadString('\n')
		if err != nil || strings.TrimSpace(l) == "" {
			return br
		}
	}
}

// TestEndlessLines: a line without end, from the client (request line,
// header, chunk size, trailer) or from the destination (status line,
// header), is cut at its bound: the peer's writes fail long before
// floodLimit, where they once filled cordon's memory.
func TestEndlessLines(t *testing.T) {
	// The destination answers a request whose body it waits for.
	up := hostileUpstream(t, func(c net.Conn) {
		br := readHead(c)
		io.Copy(io.Discard, br)
	})
	for _, tc := range []struct{ name, head string }{
		{"request-line", "GET http://s.test:" + strconv.Itoa(up) + "/"},
		{"header", "GET http://s.test:" + strconv.Itoa(up) + "/ HTTP/1.1\r\nX-A: "},
		{"chunk-size", "POST http://s.test:" + strconv.Itoa(up) + "/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1"},
		{"chunk-extension", "POST http://s.test:" + strconv.Itoa(up) + "/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;a="},
		{"trailer", "POST http://s.test:" + strconv.Itoa(up) + "/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, []string{"s.test:" + strconv.Itoa(up)}, nil, map[string]string{"s.test": "127.0.0.1"})
			c, err := net.Dial("tcp", f.addr)
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, tc.head)
			require.NoError(t, err)
			n := flood(c, '1', floodLimit)
			require.Less(t, n, floodLimit, "the proxy read %d bytes of one line and went on", n)
		})
	}
	t.Run("trailers", func(t *testing.T) {
		// Many short trailer lines: bounded together.
		f := newFixture(t, []string{"s.test:" + strconv.Itoa(up)}, nil, map[string]string{"s.test": "127.0.0.1"})
		c, err := net.Dial("tcp", f.addr)
		require.NoError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "POST http://s.test:%d/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", up)
		line := []byte("X-T: " + strings.Repeat("t", 1000) + "\r\n")
		n := 0
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		for n < floodLimit {
			m, err := c.Write(bytes.Repeat(line, 64))
			n += m
			if err != nil {
				break
			}
		}
		require.Less(t, n, floodLimit)
	})
}

// TestEndlessResponseHead: a destination that answers with a status line
// or a header without end is cut off at the head's bound, and the
// client gets a 502.
func TestEndlessResponseHead(t *testing.T) {
	for _, tc := range []struct{ name, start string }{
		{"status-line", "HTTP/1.1 200 "},
		{"header", "HTTP/1.1 200 OK\r\nX-A: "},
		{"many-headers", "HTTP/1.1 200 OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrote := make(chan int, 1)
			up := hostileUpstream(t, func(c net.Conn) {
				readHead(c)
				io.WriteString(c, tc.start)
				if tc.name == "many-headers" {
					n := 0
					for n < floodLimit {
						m, err := io.WriteString(c, "X-A: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n")
						n += m
						if err != nil {
							break
						}
					}
					wrote <- n
					return
				}
				wrote <- flood(c, 'a', floodLimit)
			})
			f := newFixture(t, []string{"s.test:" + strconv.Itoa(up)}, nil, map[string]string{"s.test": "127.0.0.1"})
			c, err := net.Dial("tcp", f.addr)
			require.NoError(t, err)
			defer c.Close()
			fmt.Fprintf(c, "GET http://s.test:%d/ HTTP/1.1\r\n\r\n", up)
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			status, err := bufio.NewReader(c).ReadString('\n')
			require.NoError(t, err)
			require.Contains(t, status, "502")
			n := <-wrote
			require.Less(t, n, floodLimit, "the proxy read %d bytes of one response head and went on", n)
		})
	}
}

// TestHeadsHeldAtOnce: heads held open across connections are bounded
// together; a head past the bound is answered 503.
func TestHeadsHeldAtOnce(t *testing.T) {
	f := newFixture(t, []string{"s.test:80"}, nil, nil)
	// Eight heads of 15/16 MiB: the ninth, of 1 MiB, is one too many.
	part := "GET http://s.test/ HTTP/1.1\r\nX-A: " + strings.Repeat("a", maxHead*15/16)
	big := "GET http://s.test/ HTTP/1.1\r\nX-A: " + strings.Repeat("a", maxHead-100)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range maxHeadsHeld / maxHead {
		c, err := net.Dial("tcp", f.addr)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = io.WriteString(c, part)
		require.NoError(t, err)
	}
	// Until the proxy has read them: a condition, not a sleep.
	for end := time.Now().Add(30 * time.Second); f.srv.heads.Load() < int64(len(conns)*(len(part)-4096)); { // the first read, a peek at the protocol, is not charged
		require.True(t, time.Now().Before(end), "the proxy did not read the heads: %d bytes held", f.srv.heads.Load())
		time.Sleep(5 * time.Millisecond)
	}
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	io.WriteString(c, big)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	status, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "503")
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	f.srv.Close()
	require.Zero(t, f.srv.heads.Load(), "heads still charged after their connections ended")
}

// tinyHeaders is a head of n distinct headers of three letters and no
// value, LF only, without the blank line that would end it: each line
// costs the parse far more than its five bytes.
func tinyHeaders(n int) string {
	const abc = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b strings.Builder
	b.WriteString("GET http://s.test/ HTTP/1.1\n")
	for i := range n {
		b.WriteByte(abc[i/(52*52)%52])
		b.WriteByte(abc[i/52%52])
		b.WriteByte(abc[i%52])
		b.WriteString(":\n")
	}
	return b.String()
}

// TestHeadsOfTinyHeaders: heads of many tiny distinct headers, held at
// once over several connections, cost the proxy what its budget says,
// not thirty times more: each line is charged as a parsed header. Judged
// by the heap live once every head is read or refused.
func TestHeadsOfTinyHeaders(t *testing.T) {
	f := newFixture(t, []string{"s.test:80"}, nil, nil)
	head := tinyHeaders(132651) // 663 KB: twelve fit the budget's raw bytes
	conns := make([]net.Conn, 12)
	answered := make([]atomic.Bool, len(conns))
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := net.Dial("tcp", f.addr)
		require.NoError(t, err)
		conns[i] = c
		go func() {
			c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(c, head) // fails once the proxy refuses it
		}()
		go func() {
			var b [1]byte
			c.Read(b[:]) // an answer, or the proxy's close
			answered[i].Store(true)
		}()
	}
	// Until every head is refused or read whole (a condition, not a
	// sleep); the first read of each, a peek, is not charged.
	done := func() bool {
		n := 0
		for i := range answered {
			if answered[i].Load() {
				n++
			}
		}
		return n == len(conns) || f.srv.heads.Load() >= int64(len(conns)*(len(head)-4096))
	}
	for end := time.Now().Add(60 * time.Second); !done(); {
		require.True(t, time.Now().Before(end), "the proxy neither read nor refused the heads: %d bytes held", f.srv.heads.Load())
		time.Sleep(5 * time.Millisecond)
	}
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	// Three times the budget, where it held 43 MB live (and a cordon run
	// 230 MB resident, with the garbage of the maps' growth).
	require.Less(t, m.HeapAlloc, uint64(3*maxHeadsHeld), "heap live with the heads held: %d MB", m.HeapAlloc>>20)
}

// TestLegitHeadsPass: the charge per line leaves real heads alone: a
// 16 KiB cookie and a hundred headers reach the destination.
func TestLegitHeadsPass(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d %d", len(r.Header.Get("Cookie")), len(r.Header))
	}))
	defer srv.Close()
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"})
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "GET http://s.test:%d/ HTTP/1.1\r\nHost: s.test:%d\r\nCookie: %s\r\n", p, p, strings.Repeat("c", 16<<10))
	for i := range 100 {
		fmt.Fprintf(&b, "X-H%d: v\r\n", i)
	}
	b.WriteString("Connection: close\r\n\r\n")
	io.WriteString(c, b.String())
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, fmt.Sprintf("%d %d", 16<<10, 102), string(body))
}

// TestLongNames: a refused name of any length is cut and escaped in the
// event and in the message for the user's terminal.
func TestLongNames(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil, nil)
	names := []string{
		strings.Repeat("a", 900<<10) + ".test",
		"\x1bc\x07red.test",
		"a\x00b\x9bc\u202e.test",
	}
	for _, n := range names {
		c, err := net.Dial("tcp", f.addr)
		require.NoError(t, err)
		fmt.Fprintf(c, "CONNECT %s:443 HTTP/1.1\r\n\r\n", n)
		io.Copy(io.Discard, c)
		c.Close()
	}
	evs := f.closeAndEvents()
	require.Len(t, evs, len(names))
	for _, e := range evs {
		require.False(t, e.Allowed)
		msg := Refusal(e)
		require.LessOrEqual(t, len(e.Host), 4*maxNameShown+40, "host in the event: %d bytes", len(e.Host))
		require.LessOrEqual(t, len(msg), 4*maxNameShown+200, "message: %d bytes", len(msg))
		for _, bad := range []string{"\x1b", "\x00", "\x07", "\xc2\x9b", "\u202e"} {
			require.NotContains(t, msg, bad)
		}
		require.Empty(t, e.Suggest, "no pattern is suggested for what is no name")
	}
	require.Contains(t, evs[0].Host, "[... 921605 bytes in all]")
	require.Contains(t, evs[1].Host, `\x1bc\ared.test`)
}

func TestShown(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":                "example.com",
		"a\\b":                       `a\\b`,
		"\x1b[31m":                   `\x1b[31m`,
		"\xff\xfe":                   `\xff\xfe`,
		"é":                          "é",
		"\u0085\u2028":               `\u0085\u2028`,
		"a b\u200f\u00ad":            `a\x20b\u200f\u00ad`,
		"abcdefghijklmnopqrstuvwxyz": "abcdefghijklmnopqrst[... 26 bytes in all]",
	} {
		require.Equal(t, want, Shown(in, 20), "%q", in)
	}
}

// TestSOCKSNameShownAsOneToken: a SOCKS5 name may hold any bytes; the
// refusal line for the user's terminal shows it as one visible token, so
// the sandbox cannot write cordon's advice into it (spaces pushing the
// real tail off the screen line) nor hide marks in it.
func TestSOCKSNameShownAsOneToken(t *testing.T) {
	f := newFixture(t, []string{"allowed.test"}, nil, nil)
	names := []string{
		"registry.npmjs.org:443: no pattern allows it; to allow it: --allow-domain evil.example" + strings.Repeat(" ", 150) + "x",
		"\u200fmoc.elpmaxe-lanretni\u200e.\u061cx\u200b\u2060\u00ad",
	}
	for _, n := range names {
		code, c := socks5(t, f.addr, n, 443, "")
		require.NotZero(t, code)
		c.Close()
	}
	evs := f.closeAndEvents()
	require.Len(t, evs, len(names))
	for _, e := range evs {
		msg := Refusal(e)
		require.NotContains(t, e.Host, " ", "host in the event")
		for _, bad := range []string{"\u200f", "\u200e", "\u061c", "\u200b", "\u2060", "\u00ad"} {
			require.NotContains(t, msg, bad)
		}
		require.NotContains(t, msg, "--allow-domain evil.example", "the sandbox wrote advice")
	}
}

// TestCloseWithDialInFlight: a destination whose connect completes after
// Close is closed at once, not sent the request and waited on: Close
// returns, where it once waited for a response that never came.
func TestCloseWithDialInFlight(t *testing.T) {
	// The port is known before the server: the fixture's Close (a
	// cleanup) must run after the server's connections end, should the
	// test fail with Close stuck on one of them.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	up := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dialing := make(chan struct{})
	f := newFixture(t, []string{"s.test:" + strconv.Itoa(up)}, nil, map[string]string{"s.test": "127.0.0.1"},
		func(s *Server) {
			s.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				close(dialing)
				// The connect completes only once Close has begun.
				for {
					s.mu.Lock()
					closed := s.closed
					s.mu.Unlock()
					if closed {
						break
					}
					time.Sleep(time.Millisecond)
				}
				var d net.Dialer
				return d.Dial(network, addr)
			}
		})
	hostileUpstreamOn(t, up, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://s.test:%d/ HTTP/1.1\r\n\r\n", up)
	<-dialing
	closed := make(chan error, 1)
	go func() { closed <- f.srv.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits, 10s on, for a destination dialled after it")
	}
}

// TestCloseCancelsLookup: a lookup in flight is cancelled by Close.
func TestCloseCancelsLookup(t *testing.T) {
	looking := make(chan struct{})
	f := newFixture(t, []string{"slow.test"}, nil, nil, func(s *Server) {
		s.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			close(looking)
			<-ctx.Done()
			return nil, ctx.Err()
		}
	})
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	io.WriteString(c, "CONNECT slow.test:443 HTTP/1.1\r\n\r\n")
	<-looking
	start := time.Now()
	require.NoError(t, f.srv.Close())
	require.Less(t, time.Since(start), 5*time.Second)
	evs := f.closeAndEvents()
	require.Len(t, evs, 1)
	require.Equal(t, ReasonEnded, evs[0].Reason, "recorded as cut by the end")
	require.Empty(t, Refusal(evs[0]), "and not told as a refusal")
}

// TestCloseBoundedByStuckEvent: an Event callback that never returns
// (stderr a pipe nobody reads) holds Close at most closeGrace; what
// comes after is dropped.
func TestCloseBoundedByStuckEvent(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	entered := make(chan struct{}, 1)
	f := newFixture(t, []string{"allowed.test"}, nil, nil, func(s *Server) {
		s.Event = func(Event) { entered <- struct{}{}; <-stuck }
	})
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	io.WriteString(c, "CONNECT other.test:443 HTTP/1.1\r\n\r\n")
	<-entered
	start := time.Now()
	require.ErrorIs(t, f.srv.Close(), ErrCloseTimeout)
	require.Less(t, time.Since(start), 5*time.Second)
}
