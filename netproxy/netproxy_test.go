package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/netpolicy"
)

// fixture is a proxy on a loopback port with a resolver of the test's own:
// names map to loopback test servers, as DNS would map them to the
// internet.
type fixture struct {
	srv    *Server
	addr   string
	mu     sync.Mutex
	events []Event
}

func newFixture(t *testing.T, allow, deny []string, names map[string]string, opts ...func(*Server)) *fixture {
	t.Helper()
	pol, err := netpolicy.New(allow, deny)
	require.NoError(t, err)
	f := &fixture{}
	f.srv = &Server{Policy: pol,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Event: func(e Event) { f.mu.Lock(); f.events = append(f.events, e); f.mu.Unlock() },
	}
	for _, o := range opts {
		o(f.srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.addr = ln.Addr().String()
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// closeAndEvents stops the proxy (which waits for every connection's
// event) and returns the events.
func (f *fixture) closeAndEvents() []Event {
	f.srv.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.events...)
}

func (f *fixture) client() *http.Client {
	u, _ := url.Parse("http://" + f.addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

func port(t *testing.T, u string) int {
	pu, err := url.Parse(u)
	require.NoError(t, err)
	p, err := strconv.Atoi(pu.Port())
	require.NoError(t, err)
	return p
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHTTPAndConnect(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s %s", r.Host, r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s", r.URL.Path)
	}))
	defer secure.Close()
	pp, sp := port(t, plain.URL), port(t, secure.URL)
	names := map[string]string{"plain.test": "127.0.0.1", "secure.test": "127.0.0.1", "other.test": "127.0.0.1"}
	f := newFixture(t, []string{fmt.Sprintf("plain.test:%d", pp), fmt.Sprintf("secure.test:%d", sp)}, nil, names)
	c := f.client()

	code, body := get(t, c, fmt.Sprintf("http://plain.test:%d/a", pp))
	require.Equal(t, 200, code)
	require.Equal(t, fmt.Sprintf("plain plain.test:%d /a", pp), body)
	// The same client connection serves a second request.
	code, _ = get(t, c, fmt.Sprintf("http://plain.test:%d/b", pp))
	require.Equal(t, 200, code)
	code, body = get(t, c, fmt.Sprintf("https://secure.test:%d/c", sp))
	require.Equal(t, 200, code)
	require.Equal(t, "secure /c", body)

	// Another host on an allowed port, another port of an allowed host,
	// and the IP the allowed name resolves to: refused.
	code, body = get(t, c, fmt.Sprintf("http://other.test:%d/", pp))
	require.Equal(t, 403, code)
	require.Contains(t, body, "refused other.test")
	code, _ = get(t, c, fmt.Sprintf("http://plain.test:%d/", sp))
	require.Equal(t, 403, code)
	code, _ = get(t, c, fmt.Sprintf("http://127.0.0.1:%d/", pp))
	require.Equal(t, 403, code)
	_, err := c.Get(fmt.Sprintf("https://other.test:%d/", sp))
	require.Error(t, err, "CONNECT to a host no pattern allows")

	c.CloseIdleConnections()
	evs := f.closeAndEvents()
	var allowed, refused []string
	for _, e := range evs {
		if e.Allowed {
			allowed = append(allowed, e.Proto+" "+e.Host)
			require.Positive(t, e.Up, "%+v", e)
			require.Positive(t, e.Down, "%+v", e)
			require.Contains(t, e.Rule, "--allow-domain")
		} else {
			refused = append(refused, e.Proto+" "+e.Host)
			require.Equal(t, "no pattern allows it", e.Rule)
			require.NotEmpty(t, e.Suggest)
			require.Contains(t, Refusal(e), "--allow-domain "+e.Suggest)
		}
	}
	require.ElementsMatch(t, []string{"http plain.test", "http plain.test", "connect secure.test"}, allowed)
	require.ElementsMatch(t, []string{"http other.test", "http plain.test", "http 127.0.0.1", "connect other.test"}, refused)
}

func TestInternalGuard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal") }))
	defer srv.Close()
	p := port(t, srv.URL)
	names := map[string]string{"a.corp.test": "127.0.0.1", "named.test": "127.0.0.1", "meta.test": "169.254.169.254"}
	f := newFixture(t, []string{fmt.Sprintf("*.corp.test:%d", p), fmt.Sprintf("named.test:%d", p), "*.test"}, nil, names)
	c := f.client()
	// A wildcard does not reach loopback.
	code, body := get(t, c, fmt.Sprintf("http://a.corp.test:%d/", p))
	require.Equal(t, 403, code)
	require.Contains(t, body, "loopback")
	// A pattern naming the host exactly does.
	code, body = get(t, c, fmt.Sprintf("http://named.test:%d/", p))
	require.Equal(t, 200, code)
	require.Equal(t, "internal", body)
	code, body = get(t, c, "http://meta.test/latest/meta-data/")
	require.Equal(t, 403, code)
	require.Contains(t, body, "metadata")
	// .localhost is loopback whatever DNS says, and internal.
	code, _ = get(t, c, fmt.Sprintf("http://x.localhost:%d/", p))
	require.Equal(t, 403, code)
	c.CloseIdleConnections()
	for _, e := range f.closeAndEvents() {
		if !e.Allowed && strings.Contains(e.Host, "corp") {
			require.Contains(t, e.Reason, "127.0.0.1 (loopback)")
			require.Equal(t, "a.corp.test:"+strconv.Itoa(p), e.Suggest)
		}
	}
}

func TestDenyWins(t *testing.T) {
	f := newFixture(t, []string{"*.example.test"}, []string{"bad.example.test"}, nil)
	code, body := get(t, f.client(), "http://bad.example.test/")
	require.Equal(t, 403, code)
	require.Contains(t, body, "--deny-domain bad.example.test")
	evs := f.closeAndEvents()
	require.Len(t, evs, 1)
	require.Empty(t, evs[0].Suggest, "no allow pattern can override a deny: nothing to suggest")
	require.NotContains(t, Refusal(evs[0]), "to allow it")
}

// socks5 connects through the proxy at addr to host:port (a name, sent
// for the proxy to resolve) and returns the reply code and the
// connection.
func socks5(t *testing.T, addr, host string, port int, cred string) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	method := byte(0)
	if cred != "" {
		method = 2
	}
	c.Write([]byte{5, 1, method})
	r := bufio.NewReader(c)
	var b [2]byte
	_, err = io.ReadFull(r, b[:])
	require.NoError(t, err)
	if b[1] == 0xff {
		return 0xff, c
	}
	if method == 2 {
		u, p, _ := strings.Cut(cred, ":")
		c.Write(append(append(append([]byte{1, byte(len(u))}, u...), byte(len(p))), p...))
		_, err = io.ReadFull(r, b[:])
		require.NoError(t, err)
		if b[1] != 0 {
			return 0xfe, c
		}
	}
	req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	var rep [10]byte
	_, err = io.ReadFull(r, rep[:])
	require.NoError(t, err)
	return rep[1], &bufConn{c, r}
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func TestSOCKS5(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "via socks") }))
	defer srv.Close()
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1", "t.test": "127.0.0.1"})
	code, c := socks5(t, f.addr, "s.test", p, "")
	require.Equal(t, byte(0), code)
	fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: s.test\r\n\r\n")
	b, _ := io.ReadAll(c)
	require.Contains(t, string(b), "via socks")
	c.Close()
	code, c = socks5(t, f.addr, "t.test", p, "")
	require.Equal(t, byte(socksNotAllowed), code)
	c.Close()
	evs := f.closeAndEvents()
	require.Len(t, evs, 2)
	require.True(t, evs[0].Allowed || evs[1].Allowed)
}

func TestCredential(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"},
		func(s *Server) { s.Credential = "cordon:s3cret" })
	code, _ := get(t, f.client(), fmt.Sprintf("http://s.test:%d/", p))
	require.Equal(t, http.StatusProxyAuthRequired, code)
	u, _ := url.Parse("http://cordon:s3cret@" + f.addr)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	code, body := get(t, c, fmt.Sprintf("http://s.test:%d/", p))
	require.Equal(t, 200, code)
	require.Equal(t, "ok", body)
	sc, _ := socks5(t, f.addr, "s.test", p, "")
	require.Equal(t, byte(0xff), sc, "SOCKS5 without user and password")
	sc, _ = socks5(t, f.addr, "s.test", p, "cordon:wrong")
	require.Equal(t, byte(0xfe), sc)
	sc, conn := socks5(t, f.addr, "s.test", p, "cordon:s3cret")
	require.Equal(t, byte(0), sc)
	conn.Close()
}

// TestCloseEndsRelays: Close ends a relay in progress and waits for its
// event; nothing of the proxy is left.
func TestCloseEndsRelays(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-hold
	}))
	defer srv.Close()
	defer close(hold)
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"})
	code, c := socks5(t, f.addr, "s.test", p, "")
	require.Equal(t, byte(0), code)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: s.test\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "200")
	evs := f.closeAndEvents()
	require.Len(t, evs, 1)
	require.True(t, evs[0].Allowed)
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the client's connection ends with the proxy")
}

// TestStreamed: a response the destination streams reaches the client
// as it comes, not when it ends.
func TestStreamed(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-hold
	}))
	defer srv.Close()
	defer close(hold)
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"})
	resp, err := f.client().Get(fmt.Sprintf("http://s.test:%d/", p))
	require.NoError(t, err)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "first\n", line)
	f.srv.Close()
}

// TestHTTPFraming: bodies pass through whatever their framing: a POST
// with a chunked body and Expect: 100-continue, HEAD, 204, a chunked
// response with trailers, one delimited by the connection's end.
func TestHTTPFraming(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %d %s", r.Method, len(b), b[:min(len(b), 10)])
		case "/nocontent":
			w.WriteHeader(204)
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Sum", "three")
		case "/eof":
			c, bw, _ := w.(http.Hijacker).Hijack()
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
			bw.Flush()
			c.Close()
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	}))
	defer srv.Close()
	p := port(t, srv.URL)
	base := fmt.Sprintf("http://s.test:%d", p)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"})
	c := f.client()

	big := strings.Repeat("x", 3<<20)
	req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(strings.NewReader(big))) // unknown length: chunked
	req.Header.Set("Expect", "100-continue")
	resp, err := c.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, fmt.Sprintf("POST %d xxxxxxxxxx", len(big)), string(b))

	resp, err = c.Post(base+"/echo", "text/plain", strings.NewReader("small"))
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "POST 5 small", string(b))

	resp, err = c.Head(base + "/")
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, int64(5), resp.ContentLength)
	resp.Body.Close()

	code, body := get(t, c, base+"/nocontent")
	require.Equal(t, 204, code)
	require.Empty(t, body)

	resp, err = c.Get(base + "/chunked")
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "part0;part1;part2;", string(b))
	require.Equal(t, "three", resp.Trailer.Get("X-Sum"))

	code, body = get(t, c, base+"/eof")
	require.Equal(t, 200, code)
	require.Equal(t, "until the end", body)
	// And the client's connection still serves the next request.
	code, body = get(t, c, base+"/")
	require.Equal(t, 200, code)
	require.Equal(t, "hello", body)
}

// TestHostHeaderFromTarget: the Host header sent on is the target's, not
// what the client wrote, so a shared server cannot be asked for another
// site under an allowed name.
func TestHostHeaderFromTarget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Host) }))
	defer srv.Close()
	p := port(t, srv.URL)
	f := newFixture(t, []string{fmt.Sprintf("s.test:%d", p)}, nil, map[string]string{"s.test": "127.0.0.1"})
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET http://s.test:%d/ HTTP/1.1\r\nHost: forbidden.test\r\nConnection: close\r\n\r\n", p)
	b, _ := io.ReadAll(c)
	require.True(t, strings.HasSuffix(string(b), fmt.Sprintf("s.test:%d", p)), "%s", b)
}

// A zoned IPv6 literal whose zone ends in an allowed suffix is no name
// under a wildcard: it once reached any address through *.corp.test.
// And a request head without end is cut, not held in the proxy's memory.
func TestZonedLiteralAndLongHead(t *testing.T) {
	f := newFixture(t, []string{"*.corp.test"}, nil, nil)
	c, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT [::ffff:203.0.113.7%%x.corp.test]:443 HTTP/1.1\r\nHost: x\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "403")

	c2, err := net.Dial("tcp", f.addr)
	require.NoError(t, err)
	defer c2.Close()
	fmt.Fprintf(c2, "GET http://a.corp.test/ HTTP/1.1\r\nX-A: ")
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	for i := 0; i < 32; i++ { // 2 MiB, past the 1 MiB bound
		if _, err := c2.Write(chunk); err != nil {
			break // the proxy has closed the connection already
		}
	}
	// The proxy has given up on the head: the connection ends, where it
	// would otherwise wait for the rest of it.
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(c2)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the proxy still waits for the rest of a head past its bound")
}
