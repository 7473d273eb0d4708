package launcher

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

// The network allowlist (Cmd.NetPolicy, docs/design.md "The network
// allowlist"): the sandbox has no network of its own, and its one way out
// is cordon's proxy (package netproxy), run in this process for the
// sandbox's lifetime. How the sandbox reaches the proxy differs by
// backend: under native and bwrap the proxy accepts on a listener inside
// the sandbox's own network namespace (net_linux.go); on macOS and under
// landlock on a loopback port of the host that only the profile, or the
// connect gate and Landlock, let the sandbox reach, behind a credential
// (net_tcp.go).

// ProxyPort is the port of the proxy on the sandbox's loopback (Linux),
// where HTTP_PROXY points.
const ProxyPort = 3128

// netSession is a launch's proxy.
type netSession struct {
	srv  *netproxy.Server
	url  string // the HTTP proxy URL the sandbox is given
	surl string // the SOCKS5 URL
	// start is run once the sandbox process has started: the proxy
	// begins to serve. close releases what start would take over (the
	// listener, the socket pair), also when the launch never started.
	start func() error
	close func()
	wg    sync.WaitGroup
	// done runs once the proxy has stopped (the default refusals'
	// summary).
	done func()
}

// On Linux the sandbox keeps its own network namespace, empty but for
// loopback, and the seccomp filter keeps refusing Unix sockets (a socket
// file of the host, docker.sock or an ssh-agent, is reachable through any
// read-only mount). The proxy's listener is made inside that namespace,
// so that only the sandbox can connect to it, by this program run as a
// helper before the command (argv[1] netExecArg): it listens on
// 127.0.0.1:ProxyPort, hands the listening socket to the launcher over
// one end of a socket pair the launcher created (sendmsg on an inherited
// socket; the filter refuses only making new Unix sockets), closes that
// end and execs the command. The launcher accepts on the socket from
// outside, in this process, and connects out from the host's namespace.
// Nothing of the proxy runs inside, and it ends with the launcher.
//
// Entering the sandbox's namespace from here instead is not open to an
// unprivileged launcher: setns to a network namespace needs CAP_SYS_ADMIN
// over the namespace and in the caller's own user namespace, and a Go
// program cannot join the sandbox's user namespace (it is multithreaded).
const netExecArg = "__cordon-net-exec"

// selfHelper is this program, when the policy lets the sandbox read and
// execute it: the helper of interactive mode and of the proxy.
func selfHelper(canon *policy.Canonical) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o111 == 0 || !canon.Access(exe, policy.Read) {
		return "", fmt.Errorf("%s is not readable inside the sandbox", exe)
	}
	return exe, nil
}

// newServer is the proxy of c: its policy, and its events to c.NetEvent
// or, without one, refusals to stderr (netproxy.Refusals), with what
// to do once it has stopped.
func (c *Cmd) newServer(stderr io.Writer) (*netproxy.Server, func()) {
	ev, done := c.NetEvent, func() {}
	if ev == nil {
		r := netproxy.NewRefusals(stderr)
		ev, done = r.Event, r.Close
	}
	return &netproxy.Server{Policy: c.NetPolicy, Event: ev}, done
}

// netStopGrace bounds how long the end of a launch waits for its proxy:
// every connection is closed and every lookup and dial cancelled at
// once, so what is left is only the last events being written. (A
// variable for the tests.)
var netStopGrace = time.Second

// stop ends the proxy and every connection through it, and waits for
// the last events, at most netStopGrace, or until quit is closed.
func (n *netSession) stop(quit <-chan struct{}) {
	if n.close != nil {
		n.close()
	}
	stopped := make(chan struct{})
	go func() {
		n.srv.Close()
		n.wg.Wait()
		close(stopped)
	}()
	t := time.NewTimer(netStopGrace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
	case <-quit:
	}
	if n.done != nil {
		n.done()
	}
}

// stopNet ends the launch's proxy, if it has one.
func (c *Cmd) stopNet() {
	if c.net != nil {
		c.net.stop(c.quit)
		c.net = nil
	}
}

// proxyEnv points the usual variables at the proxy, replacing what the
// caller had (a host proxy is unreachable from the sandbox anyway), and,
// when the caller set none, GIT_SSH_COMMAND at ssh with exe relaying
// through the proxy ("" leaves it).
func proxyEnv(env []string, httpURL, socksURL, exe string) []string {
	if exe != "" && envLookup(env, "GIT_SSH_COMMAND") == "" {
		env = setEnv(env, "GIT_SSH_COMMAND", sshCommand(exe))
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env = setEnv(env, k, httpURL)
	}
	for _, k := range []string{"ALL_PROXY", "all_proxy"} {
		env = setEnv(env, k, socksURL)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		env = setEnv(env, k, "localhost,127.0.0.1,::1")
	}
	return env
}

// checkNet refuses what a network allowlist cannot be combined with.
func (c *Cmd) checkNet() error {
	if c.NetPolicy == nil {
		return nil
	}
	if c.Network {
		return fmt.Errorf("network: a domain allowlist and the host's full network (Network) cannot be combined")
	}
	if len(c.NetPolicy.Allow) == 0 {
		return fmt.Errorf("network: the allowlist allows no host (give an allow pattern, or leave the network off)")
	}
	return nil
}

// lockedWriter serializes writes from the proxy's messages and from the
// copy of the sandbox's own stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stderrFor is where the proxy's messages go: Stderr itself when it is a
// file (written whole, as the sandbox's own writes are), else Stderr
// behind a lock that the launch's copy of the sandbox's stderr shares.
func (c *Cmd) stderrFor() io.Writer {
	switch w := c.Stderr.(type) {
	case nil:
		return nil
	case *os.File:
		return w
	case *lockedWriter:
		return w
	default:
		lw := &lockedWriter{w: w}
		if c.Stdout == c.Stderr {
			c.Stdout = lw // one writer for both (CombinedOutput): one lock
		}
		c.Stderr = lw
		return lw
	}
}

// envLookup is key's value in env, "" when unset.
func envLookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
