package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// TestGateLoopback runs a child under the filter of a landlock sandbox
// with the network off: it serves on the loopback at ports the kernel
// picks (IPv4, IPv6, a wildcard narrowed to the loopback) and its
// connects reach its own listeners; a host listener, a fixed port, a
// listener it closed, and an address rewritten to the host's port after
// the gate read it reach nothing. Judged by what the host's server
// received.
func TestGateLoopback(t *testing.T) {
	hostPort, hostHits := countingServer(t)
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
		binary.BigEndian.PutUint16(b[2:], uint16(hostPort))
		_, err = mem.WriteAt(b[2:4], int64(addr)+2)
		require.NoError(t, err)
		swapped.Add(1)
	}
	t.Cleanup(func() { testhook.MetagateConnect = nil })
	yes := func(string, bool) bool { return true }
	out := runUnderLoopbackGate(t, strconv.Itoa(hostPort), gate.Funcs{Change: yes, Read: yes})
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
		"own-v4": 0, "own-v4-accept": 0, "own-v6": 0, "own-v6-accept": 0,
		"wild-v4": 0, "wild-v4-loopback": 0, "wild-v6-dual-v4": 0, "wild-v6-dual-v6": 0,
		"listen-unbound": 0, "listen-unbound-loopback": 0, "own-nonblock": unix.EINPROGRESS,
		"swap": 0, "swap-accept": 0,
		"host": unix.EACCES, "host-v6-mapped": unix.EACCES, "bind-fixed": unix.EACCES,
		"bind-other-address": unix.EACCES, "closed-own": unix.EACCES, "udp": unix.EACCES,
	} {
		v, ok := got[name]
		require.True(t, ok, "the child did not report %s", name)
		require.Equal(t, want, v, "%s: got %v, want %v", name, v, want)
	}
	require.Equal(t, int32(1), swapped.Load(), "the address was not rewritten at the moment")
	require.Zero(t, hostHits(), "host: a connect from the sandbox reached the host's listener")
}

// runUnderLoopbackGate runs TestHelperGateLoopback under the gate's
// filter of a landlock sandbox with the network off, served with d.
func runUnderLoopbackGate(t *testing.T, arg string, d gate.Decider) string {
	t.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(t, "TestHelperGateLoopback", arg)
	cmd.ExtraFiles = []*os.File{childEnd}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, os.Stderr), io.MultiWriter(&out, os.Stderr)
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

// loopbackRules are the filter's rules of a landlock sandbox with the
// network off where the loopback is held (launcher's landlockGatedRules).
func loopbackRules() bwrap.Rules {
	return gate.UnixRules(gate.ConnectRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsTCPNoNamespace()))))
}

// TestHelperGateLoopback is the sandbox of TestGateLoopback.
func TestHelperGateLoopback(t *testing.T) {
	arg := testenv.InSubprocess(t)
	hostPort, err := strconv.Atoi(arg)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	l, err := gate.Install(bwrap.Program(loopbackRules()))
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
	lo6 := [16]byte{15: 1}
	mapped := [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}
	serve := func(fam int, sa unix.Sockaddr) (int, int) {
		s := tcp(fam, 0)
		if err := unix.Bind(s, sa); err != nil {
			t.Fatalf("bind %v: %v", sa, err)
		}
		if err := unix.Listen(s, 8); err != nil {
			t.Fatalf("listen %v: %v", sa, err)
		}
		if err := unix.SetNonblock(s, true); err != nil { // accept: what is queued, never a wait
			t.Fatal(err)
		}
		got, err := unix.Getsockname(s)
		if err != nil {
			t.Fatal(err)
		}
		switch a := got.(type) {
		case *unix.SockaddrInet4:
			return s, a.Port
		case *unix.SockaddrInet6:
			return s, a.Port
		}
		return s, 0
	}
	dial := func(name string, ln, fam int, sa unix.Sockaddr) {
		c := tcp(fam, 0)
		defer unix.Close(c)
		report(name, unix.Connect(c, sa))
		a, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		report(name+"-accept", err)
		if err == nil {
			unix.Close(a)
		}
	}

	ln, port := serve(unix.AF_INET, &unix.SockaddrInet4{Addr: lo4})
	dial("own-v4", ln, unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: lo4})
	c := tcp(unix.AF_INET, unix.SOCK_NONBLOCK)
	report("own-nonblock", unix.Connect(c, &unix.SockaddrInet4{Port: port, Addr: lo4}))
	unix.Close(c)
	// The swap: the test rewrites the port in this very buffer, to the
	// host's listener, once the gate has read it and decided.
	c = tcp(unix.AF_INET, 0)
	sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: lo4}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], uint16(port))
	copy((*[8]byte)(unsafe.Pointer(&sa.Zero))[:], swapMark)
	report("swap", rawConnect(c, (*[16]byte)(unsafe.Pointer(&sa))[:]))
	unix.Close(c)
	for { // the non-blocking one and the swapped one
		a, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		if err != nil {
			break
		}
		unix.Close(a)
		report("swap-accept", nil)
	}
	unix.Close(ln)
	report("closed-own", unix.Connect(tcp(unix.AF_INET, 0), &unix.SockaddrInet4{Port: port, Addr: lo4}))

	ln, port = serve(unix.AF_INET6, &unix.SockaddrInet6{Addr: lo6})
	dial("own-v6", ln, unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: lo6})
	unix.Close(ln)

	ln, port = serve(unix.AF_INET, &unix.SockaddrInet4{})
	got, _ := unix.Getsockname(ln)
	if a, ok := got.(*unix.SockaddrInet4); !ok || a.Addr != lo4 {
		report("wild-v4-loopback", unix.EADDRNOTAVAIL)
	} else {
		report("wild-v4-loopback", nil)
	}
	dial("wild-v4", ln, unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: lo4})
	unix.Close(ln)

	ln, port = serve(unix.AF_INET6, &unix.SockaddrInet6{})
	dial("wild-v6-dual-v4", ln, unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: lo4})
	dial("wild-v6-dual-v6", ln, unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: lo6})
	unix.Close(ln)

	s := tcp(unix.AF_INET, 0)
	report("listen-unbound", unix.Listen(s, 1))
	got, _ = unix.Getsockname(s)
	if a, ok := got.(*unix.SockaddrInet4); !ok || a.Addr != lo4 || a.Port == 0 {
		report("listen-unbound-loopback", unix.EADDRNOTAVAIL)
	} else {
		report("listen-unbound-loopback", nil)
	}
	unix.Close(s)

	report("host", unix.Connect(tcp(unix.AF_INET, 0), &unix.SockaddrInet4{Port: hostPort, Addr: lo4}))
	report("host-v6-mapped", unix.Connect(tcp(unix.AF_INET6, 0), &unix.SockaddrInet6{Port: hostPort, Addr: mapped}))
	report("bind-fixed", unix.Bind(tcp(unix.AF_INET, 0), &unix.SockaddrInet4{Port: 45679, Addr: lo4}))
	report("bind-other-address", unix.Bind(tcp(unix.AF_INET, 0), &unix.SockaddrInet4{Addr: [4]byte{10, 0, 0, 1}}))
	_, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	report("udp", err)
}

// BenchmarkLoopbackConnect times 10,000 connects to the sandbox's own
// listener on 127.0.0.1 under the gate and the same loop without it, in
// ten alternating rounds (alternate), and reports the medians and the
// median ratio (BENCHMARKS.md): go test ./gate -run '^$' -bench
// LoopbackConnect -benchtime 1x.
func BenchmarkLoopbackConnect(b *testing.B) {
	alternate(b, func(mode string, n int) string {
		arg := fmt.Sprintf("%s %d", mode, n)
		if mode == "gated" {
			yes := func(string, bool) bool { return true }
			return runUnderLoopbackGateT(b, "TestHelperLoopbackConnectLoop", arg, gate.Funcs{Change: yes, Read: yes})
		}
		o, err := testenv.Subprocess(b, "TestHelperLoopbackConnectLoop", arg).CombinedOutput()
		require.NoError(b, err, "%s", o)
		return string(o)
	})
}

// runUnderLoopbackGateT is runUnderLoopbackGate for any helper.
func runUnderLoopbackGateT(tb testing.TB, helper, arg string, d gate.Decider) string {
	tb.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(tb, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(tb, helper, arg)
	cmd.ExtraFiles = []*os.File{childEnd}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(tb, cmd.Start())
	childEnd.Close()
	listener, err := gate.RecvFd(sp[0])
	require.NoError(tb, err, "child:\n%s", out.String())
	id, err := gate.Self()
	require.NoError(tb, err)
	served := make(chan error, 1)
	go func() { served <- gate.Serve(context.Background(), listener, d, id) }()
	require.NoError(tb, cmd.Wait(), "child:\n%s", out.String())
	require.NoError(tb, <-served)
	return out.String()
}

// TestHelperLoopbackConnectLoop: "MODE N": listens on 127.0.0.1 at a
// port the kernel picks, accepts on another thread, and connects N times
// from this one, under the gate's filter when MODE is gated; prints the
// loop's time.
func TestHelperLoopbackConnectLoop(t *testing.T) {
	var mode string
	var n int
	if _, err := fmt.Sscanf(testenv.InSubprocess(t), "%s %d", &mode, &n); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if mode == "gated" {
		require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		l, err := gate.Install(bwrap.Program(loopbackRules()))
		require.NoError(t, err)
		gate.SendFd(3, l)
		unix.Close(l)
		unix.Close(3)
	}
	srv, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	lo4 := [4]byte{127, 0, 0, 1}
	require.NoError(t, unix.Bind(srv, &unix.SockaddrInet4{Addr: lo4}))
	require.NoError(t, unix.Listen(srv, 4096))
	got, err := unix.Getsockname(srv)
	require.NoError(t, err)
	go func() {
		for {
			c, _, err := unix.Accept(srv)
			if err != nil {
				return
			}
			unix.Close(c)
		}
	}()
	sa := &unix.SockaddrInet4{Port: got.(*unix.SockaddrInet4).Port, Addr: lo4}
	start := time.Now()
	for range n {
		c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		require.NoError(t, unix.Connect(c, sa))
		unix.Close(c)
	}
	fmt.Printf("elapsed %d\n", time.Since(start).Nanoseconds())
}
