package launcher

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
)

func init() {
	if len(os.Args) >= 5 && os.Args[1] == netExecArg {
		os.Exit(netExecMain(os.Args[2:]))
	}
}

// netExecMain is the helper: argv FD PORT PATH ARGV0 ARGS...
func netExecMain(a []string) int {
	fail := func(format string, v ...any) int {
		fmt.Fprintf(os.Stderr, "cordon: %s: %s\n", netExecArg, fmt.Sprintf(format, v...))
		return 125
	}
	fd, err1 := strconv.Atoi(a[0])
	port, err2 := strconv.Atoi(a[1])
	if err1 != nil || err2 != nil {
		return fail("bad arguments %q", a[:2])
	}
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail("socket: %v", err)
	}
	if err := unix.Bind(s, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("listen on 127.0.0.1:%d: %v", port, err)
	}
	if err := unix.Listen(s, 128); err != nil {
		return fail("listen on 127.0.0.1:%d: %v", port, err)
	}
	if err := unix.Sendmsg(fd, []byte{'L'}, unix.UnixRights(s), nil, 0); err != nil {
		return fail("handing the proxy's socket to cordon: %v", err)
	}
	unix.Close(fd)
	unix.Close(s)
	err = syscall.Exec(a[2], a[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", a[2], err)
	if err == syscall.ENOENT {
		return 127
	}
	return 126
}

// newNetSession makes the socket pair of a launch with a proxy, and the
// argv and environment that set the proxy up inside: fd is the number
// the sandbox's end gets there. The caller passes sandboxEnd to bwrap.
func (c *Cmd) newNetSession(canon *policy.Canonical, argv, env []string, fd int, stderr interface{ Write([]byte) (int, error) }) (n *netSession, sandboxEnd *os.File, _ []string, _ []string, err error) {
	exe, err := selfHelper(canon)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("network allowlist: cordon sets up the proxy inside the sandbox, but %v", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("network allowlist: socketpair: %w", err)
	}
	host := os.NewFile(uintptr(fds[0]), "cordon-proxy-host")
	inside := os.NewFile(uintptr(fds[1]), "cordon-proxy-sandbox")
	uc, err := net.FileConn(host)
	host.Close()
	if err != nil {
		inside.Close()
		return nil, nil, nil, nil, fmt.Errorf("network allowlist: %w", err)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ProxyPort)
	srv, done := c.newServer(stderr)
	n = &netSession{srv: srv, done: done, url: url, surl: "socks5h://127.0.0.1:" + strconv.Itoa(ProxyPort)}
	n.close = func() { uc.Close(); inside.Close() }
	n.start = func() error {
		inside.Close() // the sandbox holds it now
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			ln, err := receiveListener(uc.(*net.UnixConn))
			uc.Close()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) && !errors.Is(err, errNoListener) && stderr != nil {
					fmt.Fprintf(stderr, "cordon: network proxy: %v\n", err)
				}
				return
			}
			if err := n.srv.Serve(ln); err != nil && !errors.Is(err, netproxy.ErrClosed) && stderr != nil {
				fmt.Fprintf(stderr, "cordon: network proxy: %v; the sandbox's connections through it fail from now on\n", err)
			}
		}()
		return nil
	}
	argv = append([]string{exe, netExecArg, strconv.Itoa(fd), strconv.Itoa(ProxyPort)}, argv...)
	return n, inside, argv, proxyEnv(env, n.url, n.surl, exe), nil
}

// errNoListener: the sandbox ended without handing over a listener (the
// helper failed and said why, or the launch failed before it ran).
var errNoListener = errors.New("no listener from the sandbox")

// receiveListener takes the listening socket the helper sends, checked to
// be a listening TCP socket.
func receiveListener(uc *net.UnixConn) (net.Listener, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if errors.Is(err, io.EOF) || err == nil && n == 0 && oobn == 0 {
		return nil, errNoListener
	}
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("the sandbox's listener: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	for _, f := range fds[min(1, len(fds)):] {
		unix.Close(f)
	}
	if len(fds) == 0 {
		return nil, fmt.Errorf("the sandbox sent no listener")
	}
	fd := fds[0]
	unix.CloseOnExec(fd)
	acc, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	dom, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err3 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err := errors.Join(err1, err2, err3); err != nil || acc != 1 || dom != unix.AF_INET || typ != unix.SOCK_STREAM {
		unix.Close(fd)
		return nil, fmt.Errorf("the sandbox sent something other than a listening TCP socket")
	}
	f := os.NewFile(uintptr(fd), "cordon-proxy-listener")
	defer f.Close()
	return net.FileListener(f)
}
