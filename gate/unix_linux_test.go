package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// hostListener is a socket a host process listens on at path; accepted
// counts, once the child is done, the connections that reached it.
func hostListener(t *testing.T, path string) (accepted func() int) {
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(s) })
	require.NoError(t, unix.Bind(s, &unix.SockaddrUnix{Name: path}))
	require.NoError(t, unix.Listen(s, 64))
	if !strings.HasPrefix(path, "@") { // abstract: no file
		require.NoError(t, os.Chmod(path, 0o777))
	}
	return func() int {
		n := 0
		for {
			c, _, err := unix.Accept(s)
			if err != nil {
				return n
			}
			unix.Close(c)
			n++
		}
	}
}

// TestGateUnix runs a child under the filter of a landlock sandbox with
// its own Unix sockets: it binds, listens on, connects to and talks over
// sockets it made (absolute, relative, through a link to its own), and
// cannot reach a host process's socket, directly, through a link, by a
// name swapped for the host's after the gate pinned its own, by
// datagram, or by an abstract name (its own autobound one works); nor
// bind where the model refuses.
// Judged by the host's listeners, which must have accepted nothing.
func TestGateUnix(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	in := func(n string) string { return filepath.Join(dir, n) }
	hostHits := hostListener(t, in("host.sock"))
	swapHits := hostListener(t, in("host2.sock"))
	abstractHits := hostListener(t, "@"+in("host-abstract"))
	require.NoError(t, os.Mkdir(in("ro"), 0o777))
	require.NoError(t, os.Mkdir(in("protected"), 0o777))

	// The swap: once the gate has pinned the sandbox's own swap.sock,
	// the host's socket takes its name.
	testhook.GateUnixConnect = func(_ int, name string) {
		if name == in("swap.sock") {
			require.NoError(t, os.Rename(in("host2.sock"), in("swap.sock")))
		}
	}
	t.Cleanup(func() { testhook.GateUnixConnect = nil })
	yes := func(string, bool) bool { return true }
	d := entryDecider{Funcs: gate.Funcs{Change: yes, Read: yes}, entries: entries{allowed: dir}}
	out := runUnderUnixGate(t, dir, d)
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
		"own-bind": 0, "own-listen": 0, "own-connect": 0, "own-talk": 0,
		"rel-bind": 0, "rel-name": 0, "rel-connect": 0, "link-own": 0, "again": unix.EADDRINUSE,
		"host": unix.EACCES, "host-link": unix.EACCES, "host-relative": unix.EACCES,
		"swap-bind": 0, "swap-connect": 0, "swap-accepted": 0,
		"closed": unix.EACCES, "not-a-socket": unix.ECONNREFUSED, "missing": unix.ENOENT,
		"dgram": unix.EACCES, "dgram-pair": unix.EACCES, "seqpacket-pair": 0,
		"abstract-bind": unix.EACCES, "abstract-connect": unix.EACCES, "autobind": 0,
		"autobind-connect": 0, "autobind-closed": unix.ECONNREFUSED, "abstract-host": unix.EACCES,
		"bind-refused": unix.EACCES, "bind-protected": unix.EACCES,
	} {
		g, ok := got[name]
		require.True(t, ok, "%s: no result", name)
		require.Equal(t, want, g, "%s: got %v, want %v", name, g, want)
	}
	require.Zero(t, hostHits(), "the host's socket was reached")
	require.Zero(t, swapHits(), "the host's socket swapped in was reached")
	require.Zero(t, abstractHits(), "the host's abstract socket was reached")
	_, err := os.Lstat(in("protected/s.sock"))
	require.True(t, os.IsNotExist(err), "a socket was bound where the model refuses")
}

func runUnderUnixGate(t *testing.T, arg string, d gate.Decider) string {
	t.Helper()
	return runUnderUnixGateT(t, "TestHelperGateUnix", arg, d)
}

// runUnderUnixGateT runs the helper test under the gate's filter, served
// by d, and returns what it printed.
func runUnderUnixGateT(t testing.TB, helper, arg string, d gate.Decider) string {
	t.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(t, helper, arg)
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

func unixRules() bwrap.Rules {
	return gate.UnixRules(gate.EntryRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsNoNamespace()))))
}

func TestHelperGateUnix(t *testing.T) {
	dir := testenv.InSubprocess(t)
	in := func(n string) string { return filepath.Join(dir, n) }
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	l, err := gate.Install(bwrap.Program(unixRules()))
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
	sock := func(typ int) int {
		s, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	connect := func(name, path string) {
		c := sock(unix.SOCK_STREAM)
		report(name, unix.Connect(c, &unix.SockaddrUnix{Name: path}))
		unix.Close(c)
	}

	srv := sock(unix.SOCK_STREAM)
	report("own-bind", unix.Bind(srv, &unix.SockaddrUnix{Name: in("own.sock")}))
	report("own-listen", unix.Listen(srv, 16))
	unix.SetNonblock(srv, true) // a connect that failed leaves nothing to accept
	c := sock(unix.SOCK_STREAM)
	report("own-connect", unix.Connect(c, &unix.SockaddrUnix{Name: in("own.sock")}))
	a, _, err := unix.Accept(srv)
	if err == nil {
		_, err = unix.Write(c, []byte("hi"))
		b := make([]byte, 2)
		if n, rerr := unix.Read(a, b); err == nil && (rerr != nil || n != 2 || string(b) != "hi") {
			err = unix.EIO
		}
		unix.Close(a)
	}
	report("own-talk", err)
	unix.Close(c)
	report("again", unix.Bind(sock(unix.SOCK_STREAM), &unix.SockaddrUnix{Name: in("own.sock")}))

	if err := unix.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	rel := sock(unix.SOCK_STREAM)
	report("rel-bind", unix.Bind(rel, &unix.SockaddrUnix{Name: "rel.sock"}))
	unix.Listen(rel, 4)
	sa, err := unix.Getsockname(rel)
	if err == nil {
		if u, ok := sa.(*unix.SockaddrUnix); !ok || u.Name != "rel.sock" {
			fmt.Printf("name %#v\n", sa)
			err = unix.EINVAL
		}
	}
	report("rel-name", err)
	connect("rel-connect", "rel.sock")
	if err := os.Symlink("own.sock", in("own.link")); err != nil {
		t.Fatal(err)
	}
	connect("link-own", in("own.link"))

	connect("host", in("host.sock"))
	if err := os.Symlink(in("host.sock"), in("host.link")); err != nil {
		t.Fatal(err)
	}
	connect("host-link", in("host.link"))
	connect("host-relative", "./ro/../host.sock")

	sw := sock(unix.SOCK_STREAM)
	report("swap-bind", unix.Bind(sw, &unix.SockaddrUnix{Name: in("swap.sock")}))
	unix.Listen(sw, 4)
	connect("swap-connect", in("swap.sock"))
	unix.SetNonblock(sw, true)
	a, _, err = unix.Accept(sw)
	if err == nil {
		unix.Close(a)
	}
	report("swap-accepted", err)

	gone := sock(unix.SOCK_STREAM)
	unix.Bind(gone, &unix.SockaddrUnix{Name: in("gone.sock")})
	unix.Listen(gone, 4)
	unix.Close(gone)
	connect("closed", in("gone.sock"))
	if err := os.WriteFile(in("plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	connect("not-a-socket", in("plain"))
	connect("missing", in("nothing.sock"))

	_, err = unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	report("dgram", err)
	_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	report("dgram-pair", err)
	_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	report("seqpacket-pair", err)

	report("abstract-bind", unix.Bind(sock(unix.SOCK_STREAM), &unix.SockaddrUnix{Name: "@cordon-test"}))
	connect("abstract-connect", "@cordon-test")
	auto := sock(unix.SOCK_STREAM)
	report("autobind", unix.Bind(auto, &unix.SockaddrUnix{Name: ""}))
	unix.Listen(auto, 4)
	if sa, err := unix.Getsockname(auto); err == nil {
		connect("autobind-connect", sa.(*unix.SockaddrUnix).Name)
		unix.Close(auto)
		connect("autobind-closed", sa.(*unix.SockaddrUnix).Name)
	}
	connect("abstract-host", "@"+in("host-abstract"))

	report("bind-protected", unix.Bind(sock(unix.SOCK_STREAM), &unix.SockaddrUnix{Name: in("protected/s.sock")}))
	report("bind-refused", unix.Bind(sock(unix.SOCK_STREAM), &unix.SockaddrUnix{Name: "/cordon-refused.sock"}))
}

// BenchmarkUnixConnect times 10,000 connects to the sandbox's own socket
// under the gate and the same loop without it, in ten alternating rounds
// of 1,000 (the host's load moves between rounds, and each round's ratio
// compares neighbours), and reports the medians and the median ratio
// (BENCHMARKS.md): go test ./gate -run '^$' -bench UnixConnect
// -benchtime 1x.
func BenchmarkUnixConnect(b *testing.B) {
	alternate(b, func(mode string, n int) string {
		dir := b.TempDir()
		yes := func(string, bool) bool { return true }
		d := entryDecider{Funcs: gate.Funcs{Change: yes, Read: yes}, entries: entries{allowed: dir}}
		arg := fmt.Sprintf("%s %d %s", mode, n, dir)
		if mode == "gated" {
			return runUnderUnixGateT(b, "TestHelperUnixConnectLoop", arg, d)
		}
		o, err := testenv.Subprocess(b, "TestHelperUnixConnectLoop", arg).CombinedOutput()
		require.NoError(b, err, "%s", o)
		return string(o)
	})
}

// alternate runs a connect loop's child, ungated then gated, in ten
// rounds of 1,000 connects, and reports the median time per connect of
// each and the median of the rounds' ratios.
func alternate(b *testing.B, run func(mode string, n int) string) {
	const rounds, n = 10, 1000
	per := map[string][]float64{}
	var ratios []float64
	for range rounds {
		for _, mode := range []string{"ungated", "gated"} {
			out := run(mode, n)
			var ns float64
			for _, l := range strings.Split(out, "\n") {
				if _, err := fmt.Sscanf(l, "elapsed %g", &ns); err == nil {
					break
				}
			}
			require.NotZero(b, ns, "child:\n%s", out)
			per[mode] = append(per[mode], ns/n)
		}
		ratios = append(ratios, per["gated"][len(per["gated"])-1]/per["ungated"][len(per["ungated"])-1])
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return (v[(len(v)-1)/2] + v[len(v)/2]) / 2
	}
	for mode, v := range per {
		b.ReportMetric(median(v), mode+"-ns/connect")
	}
	b.ReportMetric(median(ratios), "ratio")
	b.Logf("ratios by round: %.2f", ratios)
}

// TestHelperUnixConnectLoop: "MODE N DIR": binds DIR/s.sock, accepts on
// another thread, and connects N times from this one, under the gate's
// filter when MODE is gated; prints the loop's time.
func TestHelperUnixConnectLoop(t *testing.T) {
	var mode, dir string
	var n int
	if _, err := fmt.Sscanf(testenv.InSubprocess(t), "%s %d %s", &mode, &n, &dir); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if mode == "gated" {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		l, err := gate.Install(bwrap.Program(unixRules()))
		if err != nil {
			t.Fatal(err)
		}
		gate.SendFd(3, l)
		unix.Close(l)
		unix.Close(3)
	}
	path := filepath.Join(dir, "s.sock")
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Bind(srv, &unix.SockaddrUnix{Name: path}))
	require.NoError(t, unix.Listen(srv, 4096))
	go func() {
		for {
			c, _, err := unix.Accept(srv)
			if err != nil {
				return
			}
			unix.Close(c)
		}
	}()
	sa := &unix.SockaddrUnix{Name: path}
	start := time.Now()
	for range n {
		c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		require.NoError(t, unix.Connect(c, sa))
		unix.Close(c)
	}
	fmt.Printf("elapsed %d\n", time.Since(start).Nanoseconds())
}

// TestGateUnixOtherSandbox: a socket another sandbox bound and listens
// on, under a gate of its own, is refused to this one (each gate knows
// only its own sandbox's sockets); judged by that sandbox's accepts.
func TestGateUnixOtherSandbox(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	yes := func(string, bool) bool { return true }
	d := entryDecider{Funcs: gate.Funcs{Change: yes, Read: yes}, entries: entries{allowed: dir}}

	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	a := testenv.Subprocess(t, "TestHelperUnixHold", dir)
	a.ExtraFiles = []*os.File{childEnd}
	stdin, err := a.StdinPipe()
	require.NoError(t, err)
	stdout, err := a.StdoutPipe()
	require.NoError(t, err)
	var errOut bytes.Buffer
	a.Stderr = &errOut
	require.NoError(t, a.Start())
	childEnd.Close()
	listener, err := gate.RecvFd(sp[0])
	require.NoError(t, err, "%s", errOut.String())
	id, err := gate.Self()
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- gate.Serve(context.Background(), listener, d, id) }()
	// The first sandbox says "ready" once it listens.
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	require.NoError(t, err, "%s", errOut.String())
	require.Equal(t, "ready\n", first, "%s", errOut.String())

	o := runUnderUnixGateT(t, "TestHelperUnixOther", dir, d)
	require.NoError(t, stdin.Close())
	rest, _ := io.ReadAll(lines)
	require.NoError(t, a.Wait(), "%s", errOut.String())
	require.NoError(t, <-served)
	require.Contains(t, o, fmt.Sprintf("result other %d", int(unix.EACCES)), o)
	require.Contains(t, string(rest), "accepted 0", "%s%s", rest, errOut.String())
}

// TestHelperUnixHold binds and listens on DIR/a.sock under the gate,
// says "ready", and, once stdin closes, says how many it accepted.
func TestHelperUnixHold(t *testing.T) {
	dir := testenv.InSubprocess(t)
	runtime.LockOSThread()
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	l, err := gate.Install(bwrap.Program(unixRules()))
	require.NoError(t, err)
	require.NoError(t, gate.SendFd(3, l))
	unix.Close(l)
	unix.Close(3)
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Bind(s, &unix.SockaddrUnix{Name: filepath.Join(dir, "a.sock")}))
	require.NoError(t, unix.Listen(s, 8))
	fmt.Println("ready")
	b := make([]byte, 1)
	os.Stdin.Read(b)
	n := 0
	for {
		c, _, err := unix.Accept(s)
		if err != nil {
			break
		}
		unix.Close(c)
		n++
	}
	fmt.Printf("accepted %d\n", n)
}

// TestHelperUnixOther connects to the other sandbox's DIR/a.sock.
func TestHelperUnixOther(t *testing.T) {
	dir := testenv.InSubprocess(t)
	runtime.LockOSThread()
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	l, err := gate.Install(bwrap.Program(unixRules()))
	require.NoError(t, err)
	require.NoError(t, gate.SendFd(3, l))
	unix.Close(l)
	unix.Close(3)
	c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	err = unix.Connect(c, &unix.SockaddrUnix{Name: filepath.Join(dir, "a.sock")})
	var e unix.Errno
	if err != nil {
		e = errnoOf(err)
	}
	fmt.Printf("result other %d\n", int(e))
}
