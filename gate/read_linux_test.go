package gate_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// TestGateRead runs a child under the gate's filter that reads extended
// attributes and adds inotify watches inside and outside the directory it
// may read, and checks what it was answered: the real values inside, the
// kernel's sizes, and nothing of outside.
func TestGateRead(t *testing.T) {
	base, allowed, outside := gateDirs(t)
	in := func(n string) string { return filepath.Join(allowed, n) }
	secret := filepath.Join(outside, "secret")
	for _, p := range []string{in("f"), in("swap"), in("private"), secret} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	if err := unix.Setxattr(in("f"), "user.v", []byte("inside-value"), 0); err != nil {
		testenv.NotApplicable(t, "this file system has no user extended attributes: "+err.Error())
	}
	require.NoError(t, unix.Setxattr(in("swap"), "user.v", []byte("decided-value"), 0))
	require.NoError(t, unix.Setxattr(secret, "user.v", []byte("SECRET-VALUE"), 0))
	require.NoError(t, unix.Setxattr(in("private"), "user.v", []byte("PRIVATE-VALUE"), 0))
	require.NoError(t, os.Symlink(secret, in("to-secret")))
	require.NoError(t, os.Mkdir(in("wdir"), 0o755))
	root := os.Geteuid() == 0
	if root {
		// The launcher reads what the sandbox (root without
		// capabilities) may not: another user's 0600 file, trusted.*.
		require.NoError(t, os.Chown(in("private"), otherUID, otherUID))
		require.NoError(t, os.Chmod(in("private"), 0o600))
		_ = unix.Setxattr(in("f"), "trusted.t", []byte("TRUSTED"), 0)
	} else {
		require.NoError(t, os.Chmod(in("private"), 0o200))
	}

	testhook.MetagateAct = func(_ int, p string) {
		switch p {
		case in("swap"):
			require.NoError(t, os.Rename(in("swap"), in("swap.orig")))
			require.NoError(t, os.Symlink(secret, in("swap")))
		case in("wdir"):
			require.NoError(t, os.Rename(in("wdir"), in("wdir.orig")))
			require.NoError(t, os.Symlink(outside, in("wdir")))
		}
	}
	t.Cleanup(func() { testhook.MetagateAct = nil })

	id, err := gate.Self()
	require.NoError(t, err)
	out := runUnderGate(t, "TestHelperGateReadChild", base, allowed, id)
	t.Logf("child:\n%s", out)
	require.NotContains(t, out, "SECRET-VALUE")
	require.NotContains(t, out, "TRUSTED")
	require.NotContains(t, out, "PRIVATE-VALUE")
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if f := strings.SplitN(sc.Text(), " ", 3); len(f) == 3 && f[0] == "result" {
			got[f[1]] = f[2]
		}
	}
	want := func(name, v string) {
		t.Helper()
		require.Equal(t, v, got[name], "%s", name)
	}
	e := func(n unix.Errno) string { return fmt.Sprintf("errno %d", int(n)) }

	t.Run("inside: the real values, the kernel's sizes", func(t *testing.T) {
		want("get", "inside-value")
		want("get-size0", "12")
		want("get-erange", e(unix.ERANGE))
		want("get-missing", e(unix.ENODATA))
		want("list-size0", fmt.Sprint(len("user.v\x00")))
		want("list", "user.v,")
		want("list-erange", e(unix.ERANGE))
		want("get-relative", "inside-value")
		want("get-badbuf", e(unix.EFAULT))
	})
	t.Run("outside and through a link: refused", func(t *testing.T) {
		want("get-outside", e(unix.EACCES))
		want("list-outside", e(unix.EACCES))
		want("get-via-link", e(unix.EACCES))
		want("watch-outside", e(unix.EACCES))
		want("get-proc-self", e(unix.EACCES))
	})
	t.Run("as the kernel would for the sandbox", func(t *testing.T) {
		want("get-unreadable", e(unix.EACCES))
		want("get-trusted", e(unix.ENODATA))
		want("getxattrat", e(unix.ENOSYS))
		want("listxattrat", e(unix.ENOSYS))
		want("fanotify-mark", e(unix.EACCES))
	})
	t.Run("path swapped after the decision", func(t *testing.T) {
		want("get-swap", "decided-value")
		want("watch-swap", "event in-decided-dir")
	})
	t.Run("a watch inside, on the caller's own instance", func(t *testing.T) {
		want("watch-inside", "event made-after-watch")
		want("watch-onlydir-file", e(unix.ENOTDIR))
	})
}

func TestHelperGateReadChild(t *testing.T) {
	base := testenv.InSubprocess(t)
	allowed, outside := filepath.Join(base, "allowed"), filepath.Join(base, "outside")
	in := func(n string) string { return filepath.Join(allowed, n) }
	if !installInChild(t) {
		return
	}
	res := func(name string, v string, err error) {
		if err != nil {
			v = fmt.Sprintf("errno %d", int(errnoOf(err)))
		}
		fmt.Printf("result %s %s\n", name, v)
	}
	get := func(name, p, attr string, size int) {
		b := make([]byte, size)
		n, err := unix.Getxattr(p, attr, b)
		v := string(b[:max(0, min(n, size))])
		if size == 0 {
			v = fmt.Sprint(n)
		}
		res(name, v, err)
	}
	list := func(name, p string, size int) {
		b := make([]byte, size)
		n, err := unix.Listxattr(p, b)
		v := strings.ReplaceAll(string(b[:max(0, min(n, size))]), "\x00", ",")
		if size == 0 {
			v = fmt.Sprint(n)
		}
		res(name, v, err)
	}
	get("get", in("f"), "user.v", 64)
	get("get-size0", in("f"), "user.v", 0)
	get("get-erange", in("f"), "user.v", 3)
	get("get-missing", in("f"), "user.none", 64)
	list("list-size0", in("f"), 0)
	list("list", in("f"), 256)
	list("list-erange", in("f"), 2)
	get("get-outside", filepath.Join(outside, "secret"), "user.v", 64)
	list("list-outside", filepath.Join(outside, "secret"), 256)
	get("get-via-link", in("to-secret"), "user.v", 64)
	get("get-unreadable", in("private"), "user.v", 64)
	get("get-trusted", in("f"), "trusted.t", 64)
	get("get-swap", in("swap"), "user.v", 64)
	get("get-proc-self", "/proc/self/status", "user.v", 64)
	res("getxattrat", "", rawErr(unix.SYS_GETXATTRAT, 0, 0, 0, 0, 0))
	res("listxattrat", "", rawErr(unix.SYS_LISTXATTRAT, 0, 0, 0, 0, 0))
	res("fanotify-mark", "", rawErr(unix.SYS_FANOTIFY_MARK, ^uintptr(0), 0, 0, 0, 0))
	p, _ := unix.BytePtrFromString(in("f"))
	name, _ := unix.BytePtrFromString("user.v")
	res("get-badbuf", "", rawErr(unix.SYS_GETXATTR, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(name)), 8, 64, 0))

	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	_, err = unix.InotifyAddWatch(fd, outside, unix.IN_CREATE)
	res("watch-outside", "", err)
	_, err = unix.InotifyAddWatch(fd, in("f"), unix.IN_ONLYDIR|unix.IN_ATTRIB)
	res("watch-onlydir-file", "", err)
	wd, err := unix.InotifyAddWatch(fd, allowed, unix.IN_CREATE)
	if err == nil {
		err = os.WriteFile(in("made-after-watch"), nil, 0o644)
	}
	v := ""
	if err == nil {
		buf := make([]byte, 4096)
		var n int
		n, err = unix.Read(fd, buf)
		if err == nil && n >= unix.SizeofInotifyEvent {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
			nm := buf[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+int(ev.Len)]
			v = fmt.Sprintf("event %s", strings.TrimRight(string(nm), "\x00"))
			if int(ev.Wd) != wd {
				v = fmt.Sprintf("event on wd %d, watch was %d", ev.Wd, wd)
			}
		}
	}
	res("watch-inside", v, err)

	// The watch lands on the directory decided on, not on the outside
	// one a link put in its place meanwhile: an event made outside
	// first must not arrive.
	fd2, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	_, err = unix.InotifyAddWatch(fd2, in("wdir"), unix.IN_CREATE)
	if err == nil {
		err = os.WriteFile(filepath.Join(outside, "made-outside"), nil, 0o644)
	}
	if err == nil {
		err = os.WriteFile(in("wdir.orig/in-decided-dir"), nil, 0o644)
	}
	v = ""
	if err == nil {
		buf := make([]byte, 4096)
		var n int
		n, err = unix.Read(fd2, buf)
		if err == nil && n >= unix.SizeofInotifyEvent {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
			v = "event " + strings.TrimRight(string(buf[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
		}
	}
	res("watch-swap", v, err)

	if err := unix.Chdir(allowed); err != nil {
		t.Fatal(err)
	}
	get("get-relative", "f", "user.v", 64)
}

func rawErr(nr uintptr, a0, a1, a2, a3, a4 uintptr) error {
	_, _, e := unix.Syscall6(nr, a0, a1, a2, a3, a4, 0)
	if e != 0 {
		return e
	}
	return nil
}
