// Package netproxy is cordon's network proxy: the only way out of a
// sandbox with a network allowlist (docs/design.md, "The network
// allowlist"). One listener speaks HTTP (absolute-URI requests and
// CONNECT) and SOCKS5 (CONNECT, with host names); the first byte tells
// them apart (SOCKS5 starts with 5, HTTP with a method's letter).
//
// Each request is decided by a netpolicy.Policy on the host name the
// client asked for, never on the address it resolves to. Allowed names
// are resolved here, on the host; an address in an internal range
// (netpolicy.Internal: loopback, private, link-local, CGNAT, multicast...)
// is refused unless the deciding pattern names the host exactly. TLS
// passes through CONNECT untouched: the proxy sees the name, not the
// content.
//
// Every decision is an Event: the host and port asked for, allowed or
// refused, the rule that decided, and the bytes relayed each way.
//
// The proxy runs outside the sandbox for as long as it runs, and the
// sandbox chooses what it reads: every line and head is read with a
// bound, what is held at once is bounded, names in events are cut and
// escaped (Shown), and Close ends everything in flight and waits at most
// a second (bounds.go names each number and why).
package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/netpolicy"
)

// Event is one decision of the proxy, and, for an allowed connection,
// what it carried.
type Event struct {
	Time time.Time `json:"time"`
	// Proto is how the client asked: "http", "connect" or "socks5".
	Proto string `json:"proto"`
	Host  string `json:"host"`
	Port  int    `json:"port"`
	// Allowed: the proxy connected the client to Addr.
	Allowed bool `json:"allowed"`
	// Rule is what decided ("--allow-domain example.com", "--deny-domain
	// x", "no pattern allows it").
	Rule string `json:"rule"`
	// Reason, on a refusal the policy allowed, says why it was refused
	// anyway (an internal address, a failed lookup or connection).
	Reason string `json:"reason,omitempty"`
	// Addr is the address connected to.
	Addr string `json:"addr,omitempty"`
	// Up and Down are the bytes relayed to and from the destination.
	Up   int64 `json:"bytesUp"`
	Down int64 `json:"bytesDown"`
	// Suggest is the pattern that would allow a refused host:port ("" when
	// a pattern would not help: a deny pattern decided, or the name
	// does not resolve).
	Suggest string `json:"-"`
}

// Server is a proxy. Set its fields before Serve; a Server serves one
// listener.
type Server struct {
	// Policy decides every request. Nil allows nothing.
	Policy *netpolicy.Policy
	// Resolve looks a host name up; nil uses the host's resolver. Names
	// under .localhost are loopback whatever Resolve says.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address; nil uses net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Credential, when set ("user:password"), is required of every
	// client: Proxy-Authorization Basic for HTTP, RFC 1929 for SOCKS5.
	Credential string
	// Event is called for every decision, one call at a time.
	Event func(Event)
	// MaxConns bounds the connections served at once (0: 256); a
	// client past it waits to be accepted.
	MaxConns int

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	// ctx is every lookup's and dial's: Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	evMu   sync.Mutex
	// gone: Close gave up waiting; later events are dropped.
	gone atomic.Bool
	// heads are the bytes of heads being held, across connections.
	heads atomic.Int64
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("netproxy: closed")

// Serve accepts connections on ln until Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	s.ln = ln
	s.initLocked()
	s.mu.Unlock()
	max := s.MaxConns
	if max <= 0 {
		max = defaultMaxConns
	}
	sem := make(chan struct{}, max)
	var pause time.Duration
	for {
		sem <- struct{}{}
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrClosed
			}
			<-sem
			if acceptAgain(err) {
				// Out of descriptors or memory for a moment (this
				// process's, not the sandbox's doing alone): wait and go
				// on, rather than leave the sandbox's connections queued
				// on a listener nobody accepts from.
				pause = min(2*pause+5*time.Millisecond, time.Second)
				if !s.sleep(pause) {
					return ErrClosed
				}
				continue
			}
			// Closed, so that the sandbox's clients fail at once instead
			// of waiting on a listener nobody accepts from.
			ln.Close()
			return err
		}
		pause = 0
		if !s.track(c) {
			c.Close()
			return ErrClosed
		}
		s.wg.Add(1)
		go func() {
			defer func() { <-sem; s.untrack(c); c.Close(); s.wg.Done() }()
			s.serveConn(c)
		}()
	}
}

// ErrCloseTimeout is returned by Close when a connection's goroutine
// was still running a second after every connection was closed and
// every lookup and dial cancelled: it is stuck in the Event callback.
// Its later events are dropped.
var ErrCloseTimeout = errors.New("netproxy: close: connections still running after 1s (stuck writing an event)")

// Close stops the listener, cancels every lookup and dial, ends every
// connection (a destination dialled after this is closed at once) and
// waits for their goroutines and their events, at most a second.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.initLocked()
	s.cancel()
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		s.gone.Store(true)
		return ErrCloseTimeout
	}
}

// acceptAgain reports whether an Accept error passes: a timeout, or a
// shortage of descriptors, memory or buffers.
func acceptAgain(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// sleep waits d, or less when the server is closed meanwhile (false).
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.context().Done():
		return false
	}
}

// initLocked makes what Serve and Close share; s.mu is held.
func (s *Server) initLocked() {
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
	}
}

// context is cancelled by Close.
func (s *Server) context() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	return s.ctx
}

// track adds c to the connections Close ends; false, after Close.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.initLocked()
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) emit(e Event) {
	if s.Event == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if testhook.NetEmit != nil {
		testhook.NetEmit(e.Allowed)
	}
	s.evMu.Lock()
	defer s.evMu.Unlock()
	if s.gone.Load() {
		return
	}
	s.Event(e)
}

// authDeadline bounds how long a client may take to present the
// credential, when one is required: the port is open to every local
// user (macOS), who must not hold the proxy's connections idle.
const authDeadline = 10 * time.Second

func (s *Server) serveConn(c net.Conn) {
	if s.Credential != "" {
		c.SetReadDeadline(time.Now().Add(authDeadline)) // cleared once authorized
	}
	cr := &capReader{r: c, left: -1, budget: &s.heads}
	defer cr.release()
	br := bufio.NewReader(cr)
	b, err := br.Peek(1)
	if err != nil {
		return
	}
	if b[0] == 5 {
		s.socks(c, br)
		return
	}
	s.http(c, br, cr)
}

// refusal is a request the proxy does not connect, with the event that
// says why.
type refusal struct{ ev Event }

func (r *refusal) Error() string {
	if r.ev.Reason != "" {
		return r.ev.Reason
	}
	return r.ev.Rule
}

// connect decides host:port and connects to it. On refusal the event is
// emitted and the error is a *refusal (or a dial error, also emitted).
// On success the destination is tracked (Close ends it), and the caller
// relays, untracks it and emits the returned event, with bytes.
func (s *Server) connect(proto, host string, port int) (net.Conn, Event, error) {
	ctx := s.context()
	name := netpolicy.Normalize(host)
	// The event carries the name as shown: cut and escaped. Only a
	// valid name (Decide allows nothing else) is looked up, unchanged.
	ev := Event{Proto: proto, Host: Shown(name, maxNameShown), Port: port}
	d := s.Policy.Decide(host, port)
	if testhook.NetAllowAll {
		d = netpolicy.Decision{Allowed: true, Literal: true}
	}
	ev.Rule = d.Rule()
	valid := netpolicy.ValidHost(name)
	refuse := func(reason, suggest string) (net.Conn, Event, error) {
		if !valid {
			suggest = ""
		}
		ev.Reason, ev.Suggest = shown.CutString(reason, maxReasonShown), suggest // a lookup's error: words, about a valid name
		s.emit(ev)
		return nil, ev, &refusal{ev}
	}
	if port < 1 || port > 65535 {
		return refuse(fmt.Sprintf("port %d out of range", port), "")
	}
	if !d.Allowed {
		suggest := ""
		if !d.Deny {
			suggest = netpolicy.Suggest(host, port)
		}
		return refuse("", suggest)
	}
	addrs, err := s.lookup(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return refuse(ReasonEnded, "")
		}
		return refuse("lookup failed: "+err.Error(), "")
	}
	var usable []netip.Addr
	var internal []string
	own := hostAddrs()
	for _, a := range addrs {
		a = a.Unmap()
		name, ok := netpolicy.Internal(a)
		if !ok && own[a.WithZone("")] {
			name, ok = "this host's own address", true
		}
		if ok && !d.Literal && !testhook.NetNoInternalGuard {
			internal = append(internal, a.String()+" ("+name+")")
			continue
		}
		usable = append(usable, a)
	}
	if len(usable) == 0 {
		if len(internal) > 0 {
			return refuse("resolves to "+strings.Join(internal, ", ")+", an internal address that only a pattern naming the host exactly may reach",
				netpolicy.Suggest(host, port))
		}
		return refuse("lookup found no address", "")
	}
	dial := s.Dial
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	var lastErr error
	for _, a := range usable {
		addr := net.JoinHostPort(a.String(), strconv.Itoa(port))
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		up, err := dial(dctx, "tcp", addr)
		cancel()
		if err == nil {
			// Dialled after Close: closed here, not left to wait on.
			if !s.track(up) {
				up.Close()
				return refuse(ReasonEnded, "")
			}
			ev.Allowed, ev.Addr = true, addr
			return up, ev, nil
		}
		if ctx.Err() != nil {
			return refuse(ReasonEnded, "")
		}
		lastErr = err
	}
	return refuse("connect failed: "+lastErr.Error(), "")
}

// hostAddrs are the addresses of this host's interfaces: a public
// address of the host reaches its services as loopback does, so a name
// only a wildcard or a preset allows must not lead there either.
func hostAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	ifas, _ := net.InterfaceAddrs()
	for _, ifa := range ifas {
		if n, ok := ifa.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				own[a.Unmap()] = true
			}
		}
	}
	return own
}

func (s *Server) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return nil, errors.New("an IPv6 zone is not a destination")
		}
		return []netip.Addr{a}, nil
	}
	if netpolicy.IsLocalhost(host) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if s.Resolve != nil {
		return s.Resolve(lctx, host)
	}
	return net.DefaultResolver.LookupNetIP(lctx, "ip", host)
}

// counted counts the bytes written to and read from a destination.
type counted struct {
	net.Conn
	up, down *atomic.Int64
}

func (c counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.down.Add(int64(n))
	return n, err
}

func (c counted) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.up.Add(int64(n))
	return n, err
}

// relay copies both ways until either side ends, then closes both; in
// is what the client sent that is already buffered. up is tracked
// (connect).
func (s *Server) relay(client net.Conn, in io.Reader, up net.Conn, ev Event) {
	defer s.untrack(up)
	var n [2]atomic.Int64
	dst := counted{up, &n[0], &n[1]}
	done := make(chan struct{}, 2)
	go func() { io.Copy(dst, in); halfClose(up); done <- struct{}{} }()
	go func() { io.Copy(client, dst); halfClose(client); done <- struct{}{} }()
	<-done
	<-done
	up.Close()
	ev.Up, ev.Down = n[0].Load(), n[1].Load()
	s.emit(ev)
}

func halfClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// unreachable: the policy allowed the destination, but it could not be
// looked up or connected to.
func (r *refusal) unreachable() bool { return r.ev.Reason != "" && r.ev.Suggest == "" }

// ReasonEnded is an event's reason when the proxy stopped (the sandbox
// ended) while the connection was being made: recorded, not a refusal
// to tell the user about.
const ReasonEnded = "the sandbox has ended"

// Refusal is the one line a refused request prints on the user's
// terminal: the host, why, and the flag that would allow it. It is ""
// for an allowed request, and for one cut short by the sandbox's end.
func Refusal(e Event) string {
	if e.Allowed || e.Reason == ReasonEnded {
		return ""
	}
	why := e.Rule
	if e.Reason != "" {
		why = e.Reason
	}
	msg := fmt.Sprintf("cordon: network: refused %s:%d: %s", e.Host, e.Port, why)
	if e.Suggest != "" {
		msg += "; to allow it: --allow-domain " + e.Suggest
	}
	return msg
}
