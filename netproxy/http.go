package netproxy

import (
	"bufio"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The HTTP side is HTTP/1.x framing written out here rather than
// net/http: net/http (with TLS, x509, HTTP/2) would grow cordon's binary
// by half and every launch, with a proxy or not, would pay for its start.
// The proxy needs only the request line, the headers and where a body
// ends; bodies pass through as they are, chunks included.

// request is one proxy request as the client sent it.
type request struct {
	method, target, proto string
	header                textproto.MIMEHeader
}

func readRequest(tp *textproto.Reader) (*request, error) {
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/1.") {
		return nil, fmt.Errorf("malformed request line %q", line)
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	return &request{method: f[0], target: f[1], proto: f[2], header: h}, nil
}

// wantsClose: the client asked for its connection to end after this
// request.
func (r *request) wantsClose() bool {
	c := strings.ToLower(r.header.Get("Connection") + "," + r.header.Get("Proxy-Connection"))
	if r.proto == "HTTP/1.0" {
		return !strings.Contains(c, "keep-alive")
	}
	return strings.Contains(c, "close")
}

// http serves HTTP proxy requests on c until the client or the
// destination closes.
func (s *Server) http(c net.Conn, br *bufio.Reader, cr *capReader) {
	tp := textproto.NewReader(br)
	for {
		// The head's bytes stay charged while the request is served: its
		// header is held until then.
		cr.release()
		cr.limit(maxHead)
		req, err := readRequest(tp)
		cr.left = -1
		if err != nil {
			if errors.Is(err, errBusy) {
				httpError(c, 503, "cordon proxy: "+err.Error())
				return
			}
			if !errors.Is(err, io.EOF) {
				httpError(c, 400, "cordon proxy: bad request: "+err.Error())
			}
			return
		}
		if !s.authorized(req.header.Get("Proxy-Authorization")) {
			io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"cordon\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		c.SetReadDeadline(time.Time{})
		if req.method == "CONNECT" {
			host, port, ok := splitHostPort(req.target, 0)
			if !ok {
				httpError(c, 400, "cordon proxy: CONNECT wants host:port, got "+req.target)
				return
			}
			up, ev, err := s.connect("connect", host, port)
			if err != nil {
				httpRefuse(c, err)
				return
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
				s.untrack(up)
				up.Close()
				s.emit(ev)
				return
			}
			cr.release() // a tunnel holds no head
			s.relay(c, br, up, ev)
			return
		}
		u, err := url.Parse(req.target)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			httpError(c, 400, "cordon proxy: want an absolute http:// URL, or CONNECT for https (got "+req.target+")")
			return
		}
		host, port, ok := splitHostPort(u.Host, 80)
		if !ok {
			httpError(c, 400, "cordon proxy: bad host "+u.Host)
			return
		}
		if !s.forward(c, br, req, u.RequestURI(), u.Host, host, port) {
			return
		}
	}
}

// hopHeaders are a single connection's, never forwarded (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Upgrade"}

// dropHop removes the hop-by-hop headers, and those Connection names.
func dropHop(h textproto.MIMEHeader) {
	for _, v := range h.Values("Connection") {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				h.Del(n)
			}
		}
	}
	for _, n := range hopHeaders {
		h.Del(n)
	}
}

func writeHeader(w *bufio.Writer, first string, h textproto.MIMEHeader, extra string) {
	w.WriteString(first + "\r\n")
	for k, vs := range h {
		for _, v := range vs {
			w.WriteString(k + ": " + v + "\r\n")
		}
	}
	w.WriteString(extra + "\r\n")
}

// bodyKind is how a message's body ends.
type bodyKind int

const (
	bodyNone bodyKind = iota
	bodyLength
	bodyChunked
	bodyUntilClose
)

func framing(h textproto.MIMEHeader, response bool) (bodyKind, int64, error) {
	if te := strings.ToLower(h.Get("Transfer-Encoding")); te != "" {
		if !strings.HasSuffix(strings.TrimSpace(te), "chunked") {
			if response {
				return bodyUntilClose, 0, nil
			}
			return 0, 0, fmt.Errorf("transfer-encoding %q without chunked", te)
		}
		h.Del("Content-Length")
		return bodyChunked, 0, nil
	}
	if cl := h.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64)
		if err != nil || n < 0 || len(h.Values("Content-Length")) > 1 {
			return 0, 0, fmt.Errorf("bad content-length %q", cl)
		}
		return bodyLength, n, nil
	}
	if response {
		return bodyUntilClose, 0, nil
	}
	return bodyNone, 0, nil
}

// copyBody copies one body framed by kind from r to w as it is; its
// chunk-size and trailer lines are read with a bound (maxLine each,
// maxHead for the trailers).
func copyBody(w io.Writer, r *bufio.Reader, kind bodyKind, n int64) error {
	switch kind {
	case bodyLength:
		_, err := io.CopyN(w, r, n)
		return err
	case bodyUntilClose:
		_, err := io.Copy(w, r)
		return err
	case bodyChunked:
		for {
			line, err := readLine(r, maxLine)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
			sz, _, _ := strings.Cut(strings.TrimSpace(line), ";")
			size, err := strconv.ParseInt(sz, 16, 64)
			if err != nil || size < 0 {
				return fmt.Errorf("bad chunk size %q", sz)
			}
			if size == 0 {
				// Trailers, up to an empty line.
				for left := maxHead; ; {
					t, err := readLine(r, min(left, maxLine))
					if err != nil {
						return err
					}
					left -= len(t)
					if _, err := io.WriteString(w, t); err != nil {
						return err
					}
					if strings.TrimSpace(t) == "" {
						return nil
					}
				}
			}
			if _, err := io.CopyN(w, r, size+2); err != nil { // the data and its CRLF
				return err
			}
		}
	}
	return nil
}

// flushWriter flushes after every write: a streamed body reaches the
// client as it comes.
type flushWriter struct{ w *bufio.Writer }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}

// forward sends one absolute-URI request to its destination on a
// connection of its own and relays the response; it reports whether the
// client's connection may serve another request.
func (s *Server) forward(c net.Conn, br *bufio.Reader, req *request, path, hostHeader, host string, port int) bool {
	reqKind, reqLen, err := framing(req.header, false)
	if err != nil {
		httpError(c, 400, "cordon proxy: "+err.Error())
		return false
	}
	keep := !req.wantsClose()
	up, ev, err := s.connect("http", host, port)
	if err != nil {
		httpRefuse(c, err)
		return false
	}
	var n [2]atomic.Int64
	dst := counted{up, &n[0], &n[1]}
	defer func() {
		s.untrack(up)
		up.Close()
		ev.Up, ev.Down = n[0].Load(), n[1].Load()
		s.emit(ev)
	}()
	if !sendRequest(c, dst, br, req, path, hostHeader, reqKind, reqLen) {
		return false
	}
	return relayResponse(c, dst, req.method, keep, &s.heads)
}

// sendRequest writes the client's request to the destination dst, its
// body relayed from br; on failure it answers the client and reports
// false.
func sendRequest(c net.Conn, dst io.Writer, br *bufio.Reader, req *request, path, hostHeader string, kind bodyKind, length int64) bool {
	dropHop(req.header)
	// The destination is the target's host, and so is the Host header
	// (RFC 9112 3.2.2): a Host naming another site would reach it on a
	// server shared with the allowed one.
	req.header.Set("Host", hostHeader)
	if strings.EqualFold(req.header.Get("Expect"), "100-continue") {
		// Answered here: the destination sees the body at once.
		req.header.Del("Expect")
		if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false
		}
	}
	uw := bufio.NewWriter(dst)
	writeHeader(uw, req.method+" "+path+" HTTP/1.1", req.header, "Connection: close\r\n")
	if err := copyBody(flushWriter{uw}, br, kind, length); err != nil || uw.Flush() != nil {
		httpError(c, 502, "cordon proxy: sending the request failed")
		return false
	}
	return true
}

// relayResponse relays the destination's interim responses and its final
// one to the client; it reports whether the client's connection may serve
// another request. Each head is read with a bound, charged to heads.
func relayResponse(c net.Conn, dst io.Reader, method string, keep bool, heads *atomic.Int64) bool {
	cr := &capReader{r: dst, left: -1, budget: heads}
	defer cr.release()
	ur := bufio.NewReader(cr)
	utp := textproto.NewReader(ur)
	cw := bufio.NewWriter(c)
	for {
		cr.release()
		cr.limit(maxHead)
		status, code, h, err := readResponseHead(utp)
		cr.left = -1
		if err != nil {
			httpError(c, 502, "cordon proxy: "+err.Error())
			return false
		}
		interim := code >= 100 && code < 200
		kind, length := bodyNone, int64(0)
		if !interim && code != 204 && code != 304 && method != "HEAD" {
			if kind, length, err = framing(h, true); err != nil {
				httpError(c, 502, "cordon proxy: "+err.Error())
				return false
			}
		}
		dropHop(h)
		closeAfter := !keep || kind == bodyUntilClose
		extra := ""
		if closeAfter && !interim {
			extra = "Connection: close\r\n"
		}
		writeHeader(cw, "HTTP/1.1 "+status, h, extra)
		if err := copyBody(flushWriter{cw}, ur, kind, length); err != nil && kind != bodyUntilClose {
			return false
		}
		if cw.Flush() != nil {
			return false
		}
		if !interim {
			return !closeAfter
		}
	}
}

// readResponseHead reads a response's status line and header: the status
// after the version ("200 OK"), its code, the header.
func readResponseHead(utp *textproto.Reader) (status string, code int, h textproto.MIMEHeader, err error) {
	line, err := utp.ReadLine()
	if err != nil {
		return "", 0, nil, fmt.Errorf("reading the response failed: %w", err)
	}
	f := strings.SplitN(line, " ", 3)
	if len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/1.") {
		code, _ = strconv.Atoi(f[1])
	}
	if code < 100 || code > 999 {
		return "", 0, nil, errors.New("malformed response from the destination")
	}
	h, err = utp.ReadMIMEHeader()
	if err != nil {
		return "", 0, nil, fmt.Errorf("reading the response failed: %w", err)
	}
	return strings.Join(f[1:], " "), code, h, nil
}

func (s *Server) authorized(h string) bool {
	if s.Credential == "" {
		return true
	}
	v, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return false
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	return err == nil && subtle.ConstantTimeCompare(got, []byte(s.Credential)) == 1
}

func splitHostPort(hp string, def int) (string, int, bool) {
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		if def == 0 || strings.Count(hp, ":") > 0 && !strings.HasPrefix(hp, "[") {
			return "", 0, false
		}
		return strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]"), def, hp != ""
	}
	if ps == "" {
		return host, def, def != 0
	}
	p, err := strconv.Atoi(ps)
	if err != nil {
		return "", 0, false
	}
	return host, p, host != ""
}

var statusText = map[int]string{400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}

func httpError(c net.Conn, code int, msg string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, statusText[code], len(msg)+1, msg)
}

func httpRefuse(c net.Conn, err error) {
	var r *refusal
	if !errors.As(err, &r) {
		httpError(c, 502, "cordon proxy: "+err.Error())
		return
	}
	msg := fmt.Sprintf("cordon: network: refused %s:%d: %s", r.ev.Host, r.ev.Port, r.Error())
	if r.unreachable() {
		httpError(c, 502, msg)
		return
	}
	httpError(c, 403, msg)
}
