package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// swapMark, in an IPv4 address's sin_zero (which the kernel ignores),
// marks the connect whose address the test rewrites in the caller's
// memory at the moment between the gate's read and its connect.
const swapMark = "swapme!!"

// countingServer accepts on 127.0.0.1 and counts what arrives; drain
// returns the count once every connection the kernel queued before it
// was called has been accepted: its own connection, which says "S" (the
// sandbox's say nothing and are closed), is accepted last, the queue
// being first in, first out.
func countingServer(t *testing.T) (port int, drain func() int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	seen := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 1)
			if m, _ := c.Read(b); m == 1 && b[0] == 'S' {
				seen <- struct{}{}
			} else {
				n.Add(1)
			}
			c.Close()
		}
	}()
	drain = func() int32 {
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write([]byte("S"))
		require.NoError(t, err)
		<-seen
		return n.Load()
	}
	return ln.Addr().(*net.TCPAddr).Port, drain
}

// TestGateConnect runs a child under the filter of a landlock sandbox
// with an allowlist: its connects to the proxy (a stand-in server here)
// reach it, blocking, non-blocking and by IPv6's mapped form; every
// other destination, datagram, listen, Fast Open and non-TCP connect is
// refused; an address rewritten in the caller's memory after the gate
// read it reaches the proxy, never the rewritten destination. Judged by
// what each server received.
func TestGateConnect(t *testing.T) {
	proxyPort, proxyHits := countingServer(t)
	otherPort, otherHits := countingServer(t)
	var swapped atomic.Int32
	testhook.MetagateConnect = func(tid int, addr uintptr) {
		mem, err := os.OpenFile("/proc/"+strconv.Itoa(tid)+"/mem", os.O_RDWR, 0)
		require.NoError(t, err)
		defer mem.Close()
		b := make([]byte, 16)
		_, err = mem.ReadAt(b, int64(addr))
		require.NoError(t, err)
		if string(b[8:16]) != swapMark {
			return
		}
		binary.BigEndian.PutUint16(b[2:], uint16(otherPort))
		_, err = mem.WriteAt(b[2:4], int64(addr)+2)
		require.NoError(t, err)
		swapped.Add(1)
	}
	t.Cleanup(func() { testhook.MetagateConnect = nil })
	yes := func(string, bool) bool { return true }
	d := gate.Proxy{Decider: gate.Funcs{Change: yes, Read: yes},
		Addr: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(proxyPort))}
	out := runUnderConnectGate(t, fmt.Sprintf("%d %d", proxyPort, otherPort), d)
	t.Logf("child:\n%s", out)
	got := map[string]unix.Errno{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var name string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "result %s %d", &name, &n); err == nil {
			got[name] = unix.Errno(n)
		}
	}
	for name, want := range map[string]unix.Errno{
		"proxy": 0, "proxy-peer": 0, "proxy-nonblock": unix.EINPROGRESS, "proxy-nonblock-done": 0,
		"proxy-v6-mapped": 0, "swap": 0, "swap-peer": 0, "unspec": 0,
		"other": unix.EACCES, "other-v6-loopback": unix.EACCES, "other-v6-mapped": unix.EACCES,
		"proxy-v6-loopback": unix.EACCES, "other-nonblock": unix.EACCES,
		"udp": unix.EACCES, "raw": unix.EACCES, "sctp": unix.EACCES, "listen": unix.EACCES,
		"fastopen-sendto": unix.EOPNOTSUPP, "fastopen-sendmsg": unix.EOPNOTSUPP,
		"socketpair-connect": unix.EINVAL, "long-address": unix.EINVAL, "short-address": unix.EINVAL,
		"not-a-socket": unix.ENOTSOCK,
	} {
		v, ok := got[name]
		require.True(t, ok, "the child did not report %s", name)
		require.Equal(t, want, v, "%s: got %v, want %v", name, v, want)
	}
	require.Equal(t, int32(1), swapped.Load(), "the address was not rewritten at the moment")
	require.Zero(t, otherHits(), "host: a connect reached the server that is not the proxy")
	require.Equal(t, int32(4), proxyHits(), "host: connects that reached the proxy (blocking, non-blocking, IPv6-mapped, swapped)")
}

// runUnderConnectGate runs TestHelperGateConnect under the gate's filter
// with connect gated, serves it with d, and returns its output.
func runUnderConnectGate(t *testing.T, arg string, d gate.Decider) string {
	t.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(t, "TestHelperGateConnect", arg)
	cmd.ExtraFiles = []*os.File{childEnd}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	childEnd.Close()
	listener, err := gate.RecvFd(sp[0])
	if err != nil {
		_ = cmd.Wait()
		if m := strings.SplitN(out.String(), "install failed: ", 2); len(m) == 2 {
			testenv.Need(t, "seccomp user notification", fmt.Errorf("%s", strings.SplitN(m[1], "\n", 2)[0]))
		}
		t.Fatalf("no listener from the child: %v\n%s", err, out.String())
	}
	id, err := gate.Self()
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- gate.Serve(context.Background(), listener, d, id) }()
	require.NoError(t, cmd.Wait(), "child:\n%s", out.String())
	require.NoError(t, <-served)
	return out.String()
}

// TestHelperGateConnect is the sandbox of TestGateConnect.
func TestHelperGateConnect(t *testing.T) {
	arg := testenv.InSubprocess(t)
	var proxyPort, otherPort int
	if _, err := fmt.Sscanf(arg, "%d %d", &proxyPort, &otherPort); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	rules := gate.ConnectRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsTCPNoNamespace())))
	l, err := gate.Install(bwrap.Program(rules))
	if err != nil {
		fmt.Printf("install failed: %v\n", err)
		return
	}
	if err := gate.SendFd(3, l); err != nil {
		t.Fatal(err)
	}
	unix.Close(l)
	unix.Close(3)

	report := func(name string, err error) {
		var e unix.Errno
		if err != nil {
			e = errnoOf(err)
		}
		fmt.Printf("result %s %d\n", name, int(e))
	}
	tcp := func(fam, flags int) int {
		s, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	lo4 := [4]byte{127, 0, 0, 1}
	mapped := netip.AddrFrom4(lo4).As16()
	peerPort := func(s int) error {
		sa, err := unix.Getpeername(s)
		if err != nil {
			return err
		}
		if p := sa.(*unix.SockaddrInet4).Port; p != proxyPort {
			return fmt.Errorf("peer port %d, not the proxy's %d", p, proxyPort)
		}
		return nil
	}

	s := tcp(unix.AF_INET, 0)
	report("proxy", unix.Connect(s, &unix.SockaddrInet4{Port: proxyPort, Addr: lo4}))
	report("proxy-peer", peerPort(s))
	// AF_UNSPEC disconnects a connected socket.
	report("unspec", rawConnect(s, make([]byte, 16)))
	unix.Close(s)

	s = tcp(unix.AF_INET, unix.SOCK_NONBLOCK)
	report("proxy-nonblock", unix.Connect(s, &unix.SockaddrInet4{Port: proxyPort, Addr: lo4}))
	fds := []unix.PollFd{{Fd: int32(s), Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 10000); err != nil {
		t.Fatal(err)
	}
	soerr, err := unix.GetsockoptInt(s, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	report("proxy-nonblock-done", err)
	unix.Close(s)

	s = tcp(unix.AF_INET6, 0)
	report("proxy-v6-mapped", unix.Connect(s, &unix.SockaddrInet6{Port: proxyPort, Addr: mapped}))
	unix.Close(s)

	// The swap: the test rewrites the port in this very buffer once the
	// gate has read it and decided.
	s = tcp(unix.AF_INET, 0)
	sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: lo4}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], uint16(proxyPort))
	copy((*[8]byte)(unsafe.Pointer(&sa.Zero))[:], swapMark)
	report("swap", rawConnect(s, (*[16]byte)(unsafe.Pointer(&sa))[:]))
	report("swap-peer", peerPort(s))
	unix.Close(s)

	for _, c := range []struct {
		name string
		fam  int
		sa   unix.Sockaddr
	}{
		{"other", unix.AF_INET, &unix.SockaddrInet4{Port: otherPort, Addr: lo4}},
		{"other-v6-mapped", unix.AF_INET6, &unix.SockaddrInet6{Port: otherPort, Addr: mapped}},
		{"other-v6-loopback", unix.AF_INET6, &unix.SockaddrInet6{Port: otherPort, Addr: netip.IPv6Loopback().As16()}},
		{"proxy-v6-loopback", unix.AF_INET6, &unix.SockaddrInet6{Port: proxyPort, Addr: netip.IPv6Loopback().As16()}},
	} {
		s := tcp(c.fam, 0)
		report(c.name, unix.Connect(s, c.sa))
		unix.Close(s)
	}
	s = tcp(unix.AF_INET, unix.SOCK_NONBLOCK)
	report("other-nonblock", unix.Connect(s, &unix.SockaddrInet4{Port: otherPort, Addr: lo4}))
	unix.Close(s)

	_, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	report("udp", err)
	_, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
	report("raw", err)
	_, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_SCTP)
	report("sctp", err)
	s = tcp(unix.AF_INET, 0)
	report("listen", unix.Listen(s, 1))
	report("fastopen-sendto", unix.Sendto(s, []byte("x"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: otherPort, Addr: lo4}))
	_, err = unix.SendmsgN(s, []byte("x"), nil, &unix.SockaddrInet4{Port: otherPort, Addr: lo4}, unix.MSG_FASTOPEN)
	report("fastopen-sendmsg", err)
	report("long-address", rawConnect(s, make([]byte, 200)))
	report("short-address", rawConnect(s, []byte{unix.AF_INET, 0, 1, 2}))
	unix.Close(s)

	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	report("socketpair-connect", unix.Connect(pair[0], &unix.SockaddrInet4{Port: proxyPort, Addr: lo4}))
	p := [2]int{}
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	report("not-a-socket", unix.Connect(p[0], &unix.SockaddrInet4{Port: proxyPort, Addr: lo4}))
}

// rawConnect is connect(2) with an address as bytes.
func rawConnect(s int, addr []byte) error {
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(s), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
	if e != 0 {
		return e
	}
	return nil
}
