package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/netpolicy"
)

// failingListener fails its first n Accepts with err, then accepts.
type failingListener struct {
	net.Listener
	n      atomic.Int32
	err    error
	closed atomic.Bool
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.Listener.Accept()
}

func (l *failingListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}

// A shortage of descriptors (EMFILE) when a connection comes in does not
// end the proxy: it waits and accepts again, and the request is served.
// Any other Accept error ends Serve with the listener closed, so that the
// sandbox's clients fail at once instead of queueing for ever.
func TestAcceptErrors(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("up")) }))
	defer up.Close()
	pp := port(t, up.URL)
	pol, err := netpolicy.New([]string{fmt.Sprintf("up.test:%d", pp)}, nil)
	require.NoError(t, err)
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fl := &failingListener{Listener: ln, err: &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}}
	fl.n.Store(3)
	srv := &Server{Policy: pol, Resolve: resolve}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(fl) }()
	f := &fixture{srv: srv, addr: ln.Addr().String()}
	code, body := get(t, f.client(), fmt.Sprintf("http://up.test:%d/", pp))
	require.Equal(t, 200, code)
	require.Equal(t, "up", body)
	require.NoError(t, srv.Close())
	require.ErrorIs(t, <-served, ErrClosed)

	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	bad := errors.New("something else")
	fl = &failingListener{Listener: ln, err: bad}
	fl.n.Store(1)
	srv = &Server{Policy: pol}
	defer srv.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(fl) }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, bad)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	require.True(t, fl.closed.Load(), "the listener is closed with it")
	_, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	require.Error(t, err, "a client fails at once")
}
