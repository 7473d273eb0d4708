package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/cordon-sandbox/cordon/policy"
)

// Without a network namespace (macOS, and the landlock backend on Linux)
// the proxy listens on a free loopback port of the host, which alone the
// sandbox may reach: on macOS by the profile (seatbelt.Options.ProxyPort),
// under landlock by the launcher's connect gate and Landlock's TCP port
// rule (landlock.Spec.ProxyPort). Every local user can reach that port
// too, so the proxy answers only clients that present this launch's
// random credential, which only the sandbox's proxy variables carry.
func (c *Cmd) newNetSessionTCP(canon *policy.Canonical, env []string, stderr io.Writer) (*netSession, int, []string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("network allowlist: proxy listener: %w", err)
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		ln.Close()
		return nil, 0, nil, fmt.Errorf("network allowlist: credential: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	secret := hex.EncodeToString(b[:])
	hp := "cordon:" + secret + "@127.0.0.1:" + strconv.Itoa(port)
	srv, done := c.newServer(stderr)
	n := &netSession{srv: srv, done: done, url: "http://" + hp, surl: "socks5h://" + hp}
	n.srv.Credential = "cordon:" + secret
	n.close = func() { ln.Close() }
	n.start = func() error {
		n.serve(ln)
		return nil
	}
	exe, _ := selfHelper(canon) // without it, no ssh relay: ssh then fails to connect
	return n, port, proxyEnv(env, n.url, n.surl, exe), nil
}

// serve runs the proxy on ln until stop.
func (n *netSession) serve(ln net.Listener) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.srv.Serve(ln)
	}()
}
