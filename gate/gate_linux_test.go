package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

// otherUID owns a file in the root case: the sandbox (root without
// capabilities) may not change it, though the launcher could.
const otherUID = 12345

// fsNodumpFl is FS_NODUMP_FL: backups skip the file.
const fsNodumpFl = 0x40

// old is a time the test gives files, to see whether a call changed them.
var old = unix.NsecToTimespec(int64(2000 * time.Second))

// gateDirs makes a fresh base holding allowed/, where the child under the
// gate may act, and outside/, where it may not.
func gateDirs(t testing.TB) (base, allowed, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	allowed, outside = filepath.Join(base, "allowed"), filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(allowed, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	return base, allowed, outside
}

// TestGate runs a child that installs the gate's filter and then tries
// metadata changes inside and outside the directory it may change; it
// checks what happened on the host.
func TestGate(t *testing.T) {
	base, allowed, outside := gateDirs(t)
	in := func(n string) string { return filepath.Join(allowed, n) }
	secret := filepath.Join(outside, "secret")
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{in("a"), 0o644}, {in("b"), 0o600}, {in("c"), 0o644}, {in("swap"), 0o600}, {in("theirs"), 0o666}, {secret, 0o600}} {
		require.NoError(t, os.WriteFile(f.path, []byte("x"), f.mode))
		require.NoError(t, os.Chmod(f.path, f.mode))
		require.NoError(t, unix.UtimesNano(f.path, []unix.Timespec{old, old}))
	}
	require.NoError(t, os.Symlink(secret, in("link")))
	root := os.Geteuid() == 0
	if root {
		require.NoError(t, os.Chown(in("theirs"), otherUID, otherUID))
	}
	xattrs := unix.Setxattr(in("c"), "user.probe", []byte("1"), 0) == nil

	// The swap a racing sandbox aims at: once the gate has decided on
	// allowed/swap, the name becomes a link to the secret.
	testhook.MetagateAct = func(tid int, p string) {
		switch p {
		case in("swap"):
			require.NoError(t, os.Rename(in("swap"), in("swap.orig")))
			require.NoError(t, os.Symlink(secret, in("swap")))
		case in("c"):
			// A signal while the caller waits for the answer (Go sends
			// SIGURG to preempt, with SA_RESTART): the call must not
			// be restarted and performed twice.
			require.NoError(t, unix.Tgkill(tgidOf(t, tid), tid, unix.SIGURG))
		}
	}
	t.Cleanup(func() { testhook.MetagateAct = nil })

	id, err := gate.Self()
	require.NoError(t, err)
	out := runUnderGate(t, "TestHelperGateChild", base, allowed, id)
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
	stat := func(p string) unix.Stat_t {
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(p, &st))
		return st
	}
	mode := func(p string) uint32 { st := stat(p); return st.Mode & 0o7777 }
	mtime := func(p string) int64 { st := stat(p); return st.Mtim.Sec }
	want := func(t *testing.T, name string, e unix.Errno) {
		t.Helper()
		v, ok := got[name]
		require.True(t, ok, "the child did not report %s", name)
		require.Equal(t, e, v, "%s: got %v, want %v", name, v, e)
	}

	t.Run("a second gate under the first", func(t *testing.T) {
		// Only one filter in a chain may have a listener: cordon's
		// landlock backend under another supervisor refuses to start.
		want(t, "install-nested", unix.EBUSY)
	})
	t.Run("chmod inside", func(t *testing.T) {
		want(t, "chmod-allowed", 0)
		require.Equal(t, uint32(0o600), mode(in("a")))
		want(t, "chmod-relative", 0)
		require.Equal(t, uint32(0o644), mode(in("b")))
		want(t, "chmod-own-fd-path", 0)
		require.Equal(t, uint32(0o640), mode(in("c")))
	})
	t.Run("chmod outside", func(t *testing.T) {
		want(t, "chmod-outside", unix.EPERM)
		want(t, "chmod-link", unix.EPERM)
		want(t, "fchmod-rdonly-outside", unix.EPERM)
		want(t, "fchmod-atfdcwd", unix.EBADF)
		want(t, "chattr-outside", unix.ENOTTY)
		if fd, err := unix.Open(secret, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
			unix.Close(fd)
			require.True(t, err != nil || flags&fsNodumpFl == 0, "the secret became nodump")
		}
		want(t, "fchmodat2-nofollow-link", unix.EOPNOTSUPP)
		want(t, "chmod-magic-link", unix.EPERM)
		require.NotEqual(t, unix.Errno(0), got["chmod-other-proc-fd"], "another process's descriptor is not the caller's") // ELOOP or EACCES
		require.Equal(t, uint32(0o600), mode(secret))
	})
	t.Run("path swapped after the decision", func(t *testing.T) {
		want(t, "chmod-swap", 0)
		require.Equal(t, uint32(0o640), mode(in("swap.orig")), "the object decided on changed")
		require.Equal(t, uint32(0o600), mode(secret), "the swapped-in target changed")
	})
	t.Run("chown", func(t *testing.T) {
		want(t, "chown-uid", unix.EPERM)
		want(t, "chown-own-gid", 0)
		require.Equal(t, id.UID, stat(in("a")).Uid)
	})
	t.Run("times", func(t *testing.T) {
		want(t, "touch-allowed", 0)
		require.Greater(t, mtime(in("a")), old.Sec)
		want(t, "utimes-allowed", 0)
		require.Equal(t, int64(1e9), mtime(in("c")))
		want(t, "touch-outside", unix.EACCES)
		require.Equal(t, old.Sec, mtime(secret))
	})
	t.Run("xattrs", func(t *testing.T) {
		want(t, "xattr-outside", unix.EPERM)
		_, err := unix.Getxattr(secret, "user.x", nil)
		require.Equal(t, unix.ENODATA, err, "user.x appeared on the secret")
		want(t, "xattr-trusted", unix.EPERM)
		if !xattrs {
			testenv.NotApplicable(t, "this file system has no user extended attributes")
		}
		want(t, "xattr-allowed", 0)
		want(t, "xattr-create", 0) // signalled at the moment the launcher acts
		v := make([]byte, 8)
		n, err := unix.Getxattr(in("a"), "user.x", v)
		require.NoError(t, err)
		require.Equal(t, "1", string(v[:n]))
	})
	t.Run("root launcher, another user's file", func(t *testing.T) {
		if !root {
			testenv.NotApplicable(t, "the launcher is not root: it cannot give a file to another user")
		}
		want(t, "chmod-theirs", unix.EPERM)
		want(t, "chown-theirs", unix.EPERM)
		want(t, "utimes-theirs", unix.EPERM)
		want(t, "touch-theirs", 0) // mode 0666: write access is enough to touch
		st := stat(in("theirs"))
		require.Equal(t, uint32(0o666), st.Mode&0o7777)
		require.Equal(t, uint32(otherUID), st.Uid)
	})
}

// runUnderGate runs the helper test name in a child that installs the
// gate's filter and sends its listener, serves it with a Decider that
// allows changes beneath allowed, and returns the child's output once
// the child has ended and Serve has returned.
func runUnderGate(t *testing.T, name, arg, allowed string, id gate.Identity) string {
	t.Helper()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(t, name, arg)
	cmd.ExtraFiles = []*os.File{childEnd}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	childEnd.Close()
	listener, recvErr := gate.RecvFd(sp[0])
	if recvErr != nil {
		_ = cmd.Wait()
		if m := strings.SplitN(out.String(), "install failed: ", 2); len(m) == 2 {
			testenv.Need(t, "seccomp user notification", fmt.Errorf("%s", strings.SplitN(m[1], "\n", 2)[0]))
		}
		t.Fatalf("no listener from the child: %v\n%s", recvErr, out.String())
	}
	served := make(chan error, 1)
	go func() {
		in := func(p string, _ bool) bool { return p == allowed || strings.HasPrefix(p, allowed+"/") }
		d := gate.Funcs{Change: in, Read: in}
		served <- gate.Serve(context.Background(), listener, d, id)
	}()
	require.NoError(t, cmd.Wait(), "child:\n%s", out.String())
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10 s after the sandbox ended")
	}
	return out.String()
}

// installInChild begins a helper: the filter and no_new_privs on this
// thread (every call the helper makes runs on it), the listener sent on
// descriptor 3. It returns false when the kernel refused the filter.
func installInChild(t *testing.T) bool {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	l, err := gate.Install(bwrap.Program(gate.Rules(bwrap.RulesFor(bwrap.SocketsFor(true)))))
	if err != nil {
		fmt.Printf("install failed: %v\n", err)
		return false
	}
	if err := gate.SendFd(3, l); err != nil {
		t.Fatal(err)
	}
	unix.Close(l)
	unix.Close(3)
	return true
}

// TestGateFlood: a sandbox calling chmod as fast as it can makes the
// launcher wait, not grow.
func TestGateFlood(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(base, "f"), nil, 0o644))
	id, err := gate.Self()
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := runUnderGate(t, "TestHelperGateFlood", base, base, id)
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("child: %s; heap in use %d KiB before, %d KiB after, %d KiB obtained from the system",
		strings.TrimSpace(out), before.HeapInuse>>10, after.HeapInuse>>10, after.Sys>>10)
	require.Contains(t, out, "flood done")
	require.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(8<<20), "the launcher's heap grew")
}

func TestHelperGateFlood(t *testing.T) {
	base := testenv.InSubprocess(t)
	if !installInChild(t) {
		return
	}
	const n = 20000
	start := time.Now()
	for i := range n {
		if err := unix.Chmod(filepath.Join(base, "f"), 0o600|uint32(i&1)<<2); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	fmt.Printf("flood done: %d calls, %.1f us each\n", n, float64(time.Since(start).Microseconds())/n)
}

// TestGateLauncherGone: once Serve has stopped (its context done), the
// sandbox's calls fail; none passes unchecked.
func TestGateLauncherGone(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := filepath.Join(base, "f")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	require.NoError(t, os.Chmod(f, 0o644))
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(sp[0])
	childEnd := os.NewFile(uintptr(sp[1]), "gate socket")
	cmd := testenv.Subprocess(t, "TestHelperGateGone", base)
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
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	yes := func(string, bool) bool { return true }
	err = gate.Serve(ctx, listener, gate.Funcs{Change: yes, Read: yes}, gate.Identity{})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, cmd.Wait(), "child:\n%s", out.String())
	require.Contains(t, out.String(), fmt.Sprintf("result chmod %d", int(unix.ENOSYS)))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(f, &st))
	require.Equal(t, uint32(0o644), st.Mode&0o7777)
}

func TestHelperGateGone(t *testing.T) {
	base := testenv.InSubprocess(t)
	if !installInChild(t) {
		return
	}
	var e unix.Errno
	if err := unix.Chmod(filepath.Join(base, "f"), 0o600); err != nil {
		e = errnoOf(err)
	}
	fmt.Printf("result chmod %d\n", int(e))
}

// TestHelperGateChild is the sandbox of TestGate: it installs the filter,
// sends the listener on descriptor 3, and reports each call's errno.
func TestHelperGateChild(t *testing.T) {
	base := testenv.InSubprocess(t)
	allowed, secret := filepath.Join(base, "allowed"), filepath.Join(base, "outside", "secret")
	in := func(n string) string { return filepath.Join(allowed, n) }
	if !installInChild(t) {
		return
	}

	report := func(name string, err error) {
		var e unix.Errno
		if err != nil {
			e = errnoOf(err)
		}
		fmt.Printf("result %s %d\n", name, int(e))
	}
	_, err := gate.Install(bwrap.Program(gate.Rules(bwrap.RulesFor(bwrap.SocketsFor(true)))))
	report("install-nested", err)
	report("chmod-allowed", unix.Chmod(in("a"), 0o600))
	report("chmod-outside", unix.Chmod(secret, 0o644))
	report("chmod-link", unix.Chmod(in("link"), 0o644))
	report("chmod-swap", unix.Chmod(in("swap"), 0o640))
	report("fchmodat2-nofollow-link", fchmodat2(in("link"), 0o644, unix.AT_SYMLINK_NOFOLLOW))
	fd, err := unix.Open(secret, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	report("fchmod-rdonly-outside", unix.Fchmod(fd, 0o644))
	report("fchmod-atfdcwd", unix.Fchmod(unix.AT_FDCWD, 0o777))
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|fsNodumpFl))
	}
	report("chattr-outside", err)
	report("touch-outside", utimensatPath(unix.AT_FDCWD, secret, nil))
	report("xattr-outside", unix.Setxattr(secret, "user.x", []byte("1"), 0))
	// glibc before 2.39 makes fchmodat(AT_SYMLINK_NOFOLLOW) a chmod of
	// /proc/self/fd/N on an O_PATH descriptor (tar x does it for every
	// directory): decided as fchmod of the caller's own descriptor.
	pfd, err := unix.Open(secret, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	report("chmod-magic-link", unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), 0o777))
	cfd, err := unix.Open(in("c"), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	report("chmod-own-fd-path", unix.Chmod("/proc/thread-self/fd/"+strconv.Itoa(cfd), 0o640))
	report("chmod-other-proc-fd", unix.Chmod("/proc/1/fd/0", 0o777))
	report("chown-uid", unix.Chown(in("a"), os.Getuid()+1, -1))
	report("chown-own-gid", unix.Chown(in("a"), -1, os.Getgid()))
	report("touch-allowed", utimensatPath(unix.AT_FDCWD, in("a"), nil))
	report("utimes-allowed", unix.Utimes(in("c"), []unix.Timeval{{Sec: 1e9}, {Sec: 1e9}}))
	report("xattr-allowed", unix.Setxattr(in("a"), "user.x", []byte("1"), 0))
	report("xattr-create", unix.Setxattr(in("c"), "user.created", []byte("1"), unix.XATTR_CREATE))
	report("xattr-trusted", unix.Setxattr(in("a"), "trusted.x", []byte("1"), 0))
	report("chmod-theirs", unix.Chmod(in("theirs"), 0o600))
	report("chown-theirs", unix.Chown(in("theirs"), os.Getuid(), -1))
	report("utimes-theirs", unix.Utimes(in("theirs"), []unix.Timeval{{Sec: 1e9}, {Sec: 1e9}}))
	report("touch-theirs", utimensatPath(unix.AT_FDCWD, in("theirs"), nil))
	if err := unix.Chdir(allowed); err != nil {
		t.Fatal(err)
	}
	report("chmod-relative", unix.Chmod("b", 0o644))
}

// tgidOf is the process of thread tid.
func tgidOf(t *testing.T, tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no Tgid for thread %d", tid)
	return 0
}

func fchmodat2(path string, mode uint32, flags int) error {
	cwd := unix.AT_FDCWD
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	const sysFchmodat2 = 452 // the same on every architecture (Linux 6.6)
	_, _, e := unix.Syscall6(sysFchmodat2, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(mode), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func utimensatPath(dirfd int, path string, ts *[2]unix.Timespec) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// errnoOf is err's errno, EIO when it carries none.
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}
