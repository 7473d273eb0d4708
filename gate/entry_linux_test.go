package gate_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// entries is the test's entry decider: beneath allowed/ the sandbox may
// make and write anything but the name "protected" and what holds it;
// the kernel "allows" nothing (the child has no Landlock), so the gate
// acts on every call but those in allowed/free, which it continues.
type entries struct{ allowed string }

func (e entries) in(p string) bool { return strings.HasPrefix(p, e.allowed+"/") }

func (e entries) KernelAllows(p string, _ gate.Need) bool {
	return strings.HasPrefix(p, e.allowed+"/free/")
}

func (e entries) MayEntry(p string) bool {
	return e.in(p) && !strings.Contains(p[len(e.allowed):]+"/", "/protected/") && p != e.allowed+"/keep"
}

func (e entries) MayCreate(p string, _ bool) bool { return e.MayEntry(p) }

func (e entries) MayWrite(p string) bool { return e.in(p) && !strings.Contains(p, "/protected") }

func (e entries) Private(dir string) bool { return dir == e.allowed+"/shm" }

type entryDecider struct {
	gate.Funcs
	entries
}

// TestEntryGate runs a child under the entry gate's filter that makes,
// writes, renames, links and removes names inside and outside the place
// it may change, and judges each on the host.
func TestEntryGate(t *testing.T) {
	base, allowed, outside := gateDirs(t)
	in := func(n string) string { return filepath.Join(allowed, n) }
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret\n"), 0o644))
	require.NoError(t, os.WriteFile(in("old"), []byte("old\n"), 0o644))
	require.NoError(t, os.WriteFile(in("ro"), []byte("ro\n"), 0o444))
	require.NoError(t, os.Mkdir(in("keep"), 0o755)) // stands for a directory holding a protected name
	require.NoError(t, os.Mkdir(in("free"), 0o755))
	require.NoError(t, os.Mkdir(in("d"), 0o755))
	require.NoError(t, os.Mkdir(in("shm"), 0o777))
	require.NoError(t, os.WriteFile(in("shm/host"), []byte("host\n"), 0o666))
	root := os.Geteuid() == 0
	if root {
		require.NoError(t, os.Mkdir(in("theirs"), 0o755))
		require.NoError(t, os.Chown(in("theirs"), otherUID, otherUID))
	}

	// The swaps a racing sandbox aims at, each once the gate has decided:
	// the directory a name is made in becomes a link to outside/, and a
	// name about to be made appears as a link to the secret.
	testhook.EntrygateAct = func(_ int, p string) {
		switch p {
		case in("d/made"):
			require.NoError(t, os.Rename(in("d"), in("d.orig")))
			require.NoError(t, os.Symlink(outside, in("d")))
		case in("swapped"):
			require.NoError(t, os.Symlink(secret, in("swapped")))
		}
	}
	t.Cleanup(func() { testhook.EntrygateAct = nil })

	id, err := gate.Self()
	require.NoError(t, err)
	out := runUnderEntryGate(t, "TestHelperEntryGateChild", base, allowed, id)
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
	want := func(t *testing.T, name string, e unix.Errno) {
		t.Helper()
		v, ok := got[name]
		require.True(t, ok, "the child did not report %s", name)
		require.Equal(t, e, v, "%s: got %v, want %v", name, v, e)
	}
	var tt *testing.T // the subtest running
	content := func(p string) string {
		b, err := os.ReadFile(p)
		require.NoError(tt, err, p)
		return string(b)
	}
	absent := func(p string) {
		tt.Helper()
		_, err := os.Lstat(p)
		require.ErrorIs(tt, err, os.ErrNotExist, "%s exists", p)
	}
	mode := func(p string) uint32 {
		var st unix.Stat_t
		require.NoError(tt, unix.Lstat(p, &st))
		return st.Mode & 0o7777
	}

	t.Run("work", func(t *testing.T) {
		tt = t
		want(t, "create", 0)
		require.Equal(t, uint32(0o640), mode(in("renamed")), "the caller's umask 027")
		want(t, "create-cloexec", 0)
		want(t, "create-no-cloexec", 0)
		want(t, "mkdir", 0)
		want(t, "fill", 0)
		require.Equal(t, "f\n", content(in("build/f")))
		require.Equal(t, uint32(0o750), mode(in("build")))
		want(t, "rewrite", 0)
		require.Equal(t, "again\n", content(in("old")))
		want(t, "truncate", 0)
		want(t, "rename", 0)
		require.Equal(t, "ne", content(in("renamed")))
		absent(in("new"))
		want(t, "symlink", 0)
		target, err := os.Readlink(in("sym"))
		require.NoError(t, err)
		require.Equal(t, "renamed", target)
		want(t, "hardlink", 0)
		require.Equal(t, "ne", content(in("hard")))
		want(t, "unlink", 0)
		absent(in("hard2"))
		want(t, "rmdir", 0)
		absent(in("build2"))
		want(t, "mkdir-exists", unix.EEXIST)
		want(t, "continued", 0)
		require.Equal(t, "free\n", content(in("free/f")))
	})
	t.Run("refused", func(t *testing.T) {
		tt = t
		want(t, "create-protected", unix.EACCES)
		absent(in("protected"))
		want(t, "mkdir-protected", unix.EACCES)
		want(t, "create-outside", unix.EACCES)
		absent(filepath.Join(outside, "new"))
		want(t, "write-outside", unix.EACCES)
		require.Equal(t, "secret\n", content(secret))
		want(t, "rename-holder-away", unix.EACCES)
		require.DirExists(t, in("keep"))
		want(t, "rename-onto-protected", unix.EACCES)
		want(t, "hardlink-secret-in", unix.EACCES)
		absent(in("pw"))
		want(t, "rename-secret-in", unix.EACCES)
		require.Equal(t, "secret\n", content(secret))
		want(t, "truncate-outside", unix.EACCES)
		want(t, "unlink-outside", unix.EACCES)
		require.FileExists(t, secret)
		want(t, "mknod-device", unix.EPERM)
		absent(in("dev"))
	})
	t.Run("swapped after the decision", func(t *testing.T) {
		tt = t
		want(t, "mkdir-swapped-parent", 0)
		require.DirExists(t, in("d.orig/made"), "made where the gate decided")
		absent(filepath.Join(outside, "made"))
		want(t, "create-swapped-name", unix.EACCES)
		require.Equal(t, "secret\n", content(secret))
	})
	t.Run("private creation directory", func(t *testing.T) {
		tt = t
		want(t, "shm-create", 0)
		want(t, "shm-reopen-own", 0)
		want(t, "shm-link-own", 0)
		want(t, "shm-rename-own", 0)
		want(t, "shm-unlink-own", 0)
		want(t, "shm-write-host", unix.EACCES)
		want(t, "shm-unlink-host", unix.EACCES)
		want(t, "shm-rename-host", unix.EACCES)
		want(t, "shm-link-host", unix.EACCES)
		want(t, "shm-link-out", unix.EACCES)
		// A directory it made is its own as the files are, with what it
		// makes in it, through a rename of it too; the host's stay out.
		want(t, "shm-mkdir", 0)
		want(t, "shm-create-in-made-dir", 0)
		want(t, "shm-rename-made-dir", 0)
		want(t, "shm-reopen-in-moved-dir", 0)
		want(t, "shm-host-into-made-dir", unix.EACCES)
		want(t, "shm-symlink", unix.EACCES)
		require.Equal(t, "host\n", content(in("shm/host")))
		es, err := os.ReadDir(in("shm"))
		require.NoError(t, err)
		require.Len(t, es, 1, "what the sandbox made there is removed when it is gone: %v", es)
		absent(in("shm-out"))
	})
	t.Run("the sandbox's identity", func(t *testing.T) {
		tt = t
		want(t, "write-readonly", unix.EACCES) // mode 0444: not even root without capabilities
		require.Equal(t, "ro\n", content(in("ro")))
		if !root {
			testenv.NotApplicable(t, "the launcher is not root: it has no capabilities to drop")
		}
		want(t, "create-in-theirs", unix.EACCES)
		absent(in("theirs/x"))
	})
}

// runUnderEntryGate is runUnderGate with the entry gate's filter and
// decider.
func runUnderEntryGate(t *testing.T, name, arg, allowed string, id gate.Identity) string {
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
		inside := func(p string, _ bool) bool { return strings.HasPrefix(p, allowed+"/") }
		d := entryDecider{gate.Funcs{Change: inside, Read: inside}, entries{allowed}}
		served <- gate.Serve(context.Background(), listener, d, id)
	}()
	require.NoError(t, cmd.Wait(), "child:\n%s", out.String())
	require.NoError(t, <-served)
	return out.String()
}

func TestHelperEntryGateChild(t *testing.T) {
	base := testenv.InSubprocess(t)
	allowed, outside := filepath.Join(base, "allowed"), filepath.Join(base, "outside")
	in := func(n string) string { return filepath.Join(allowed, n) }
	secret := filepath.Join(outside, "secret")
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	rules := gate.EntryRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsFor(true))))
	rules.NoAccessOpens = true
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
	write := func(p string, flags int, s string) error {
		fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0o666)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = unix.Write(fd, []byte(s))
		return err
	}
	unix.Umask(0o027)
	report("create", write(in("new"), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, "new\n"))
	cloexec := func(p string, flags int, want bool) error {
		fd, err := unix.Open(p, flags|unix.O_WRONLY|unix.O_CREAT, 0o644)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		v, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			return err
		}
		if (v&unix.FD_CLOEXEC != 0) != want {
			return unix.EBADFD
		}
		return nil
	}
	report("create-cloexec", cloexec(in("c1"), unix.O_CLOEXEC, true))
	report("create-no-cloexec", cloexec(in("c2"), 0, false))
	report("mkdir", unix.Mkdir(in("build"), 0o777))
	report("fill", write(in("build/f"), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, "f\n"))
	report("rewrite", write(in("old"), unix.O_WRONLY|unix.O_TRUNC, "again\n"))
	report("truncate", unix.Truncate(in("new"), 2))
	report("rename", unix.Rename(in("new"), in("renamed")))
	report("symlink", unix.Symlink("renamed", in("sym")))
	report("hardlink", unix.Link(in("renamed"), in("hard")))
	unix.Link(in("renamed"), in("hard2"))
	report("unlink", unix.Unlink(in("hard2")))
	unix.Mkdir(in("build2"), 0o755)
	report("rmdir", unix.Rmdir(in("build2")))
	report("mkdir-exists", unix.Mkdir(in("build"), 0o755))
	report("continued", write(in("free/f"), unix.O_WRONLY|unix.O_CREAT, "free\n"))

	report("create-protected", write(in("protected"), unix.O_WRONLY|unix.O_CREAT, "x"))
	report("mkdir-protected", unix.Mkdir(in("build/protected"), 0o755))
	report("create-outside", write(filepath.Join(outside, "new"), unix.O_WRONLY|unix.O_CREAT, "x"))
	report("write-outside", write(secret, unix.O_WRONLY|unix.O_TRUNC, "x"))
	report("rename-holder-away", unix.Rename(in("keep"), in("kept")))
	report("rename-onto-protected", unix.Rename(in("renamed"), in("protected")))
	report("hardlink-secret-in", unix.Link(secret, in("pw")))
	report("rename-secret-in", unix.Rename(secret, in("stolen")))
	report("truncate-outside", unix.Truncate(secret, 0))
	report("unlink-outside", unix.Unlink(secret))
	report("mknod-device", unix.Mknod(in("dev"), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))

	report("mkdir-swapped-parent", unix.Mkdir(in("d/made"), 0o755))
	report("create-swapped-name", write(in("swapped"), unix.O_WRONLY|unix.O_CREAT, "x"))

	shm := func(n string) string { return in("shm/" + n) }
	report("shm-create", write(shm("mine"), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, "mine"))
	report("shm-reopen-own", write(shm("mine"), unix.O_RDWR, "again"))
	report("shm-link-own", unix.Link(shm("mine"), shm("sem.x")))
	report("shm-rename-own", unix.Rename(shm("sem.x"), shm("sem.y")))
	write(shm("gone"), unix.O_RDWR|unix.O_CREAT, "x")
	report("shm-unlink-own", unix.Unlink(shm("gone")))
	report("shm-write-host", write(shm("host"), unix.O_WRONLY|unix.O_APPEND, "x"))
	report("shm-unlink-host", unix.Unlink(shm("host")))
	report("shm-rename-host", unix.Rename(shm("host"), shm("taken")))
	report("shm-link-host", unix.Link(shm("host"), shm("taken")))
	report("shm-link-out", unix.Link(shm("mine"), in("shm-out")))
	report("shm-mkdir", unix.Mkdir(shm("d"), 0o755))
	report("shm-create-in-made-dir", write(shm("d/f"), unix.O_WRONLY|unix.O_CREAT, "f"))
	report("shm-rename-made-dir", unix.Rename(shm("d"), shm("e")))
	report("shm-reopen-in-moved-dir", write(shm("e/f"), unix.O_WRONLY|unix.O_APPEND, "g"))
	report("shm-host-into-made-dir", unix.Rename(shm("host"), shm("e/host")))
	report("shm-symlink", unix.Symlink("/etc/passwd", shm("l")))
	unix.Mkdir(shm("e/left"), 0o755) // left for the gate to remove, deepest first
	write(shm("e/left/f"), unix.O_WRONLY|unix.O_CREAT, "x")

	report("write-readonly", write(in("ro"), unix.O_WRONLY, "x"))
	report("create-in-theirs", write(in("theirs/x"), unix.O_WRONLY|unix.O_CREAT, "x"))
}

// TestEntryGateAddfdSignalled signals the supervisor's thread while it
// hands each new file to the caller (SECCOMP_IOCTL_NOTIF_ADDFD), as Go's
// preemption does under load: every open the gate performed must give the
// caller the file it made. With SECCOMP_ADDFD_FLAG_SEND an interrupted
// handover withdrew the descriptor but kept the answer, and the open
// returned 0, the caller's stdin ("Cannot write: Bad file descriptor").
func TestEntryGateAddfdSignalled(t *testing.T) {
	base, _, _ := gateDirs(t)
	pid := unix.Getpid()
	testhook.EntrygateAddfd = func() {
		tid := unix.Gettid()
		// A burst of signals on this thread, from another, while it
		// waits in the ioctl; the burst ends so the handover completes.
		go func() {
			for range 300 {
				if unix.Tgkill(pid, tid, unix.SIGURG) != nil {
					return
				}
			}
		}()
	}
	t.Cleanup(func() { testhook.EntrygateAddfd = nil })
	id, err := gate.Self()
	require.NoError(t, err)
	out := runUnderEntryGate(t, "TestHelperEntryGateAddfdChild", base, filepath.Join(base, "allowed"), id)
	require.Contains(t, out, "result addfd 0 0\n", "child:\n%s", out)
}

func TestHelperEntryGateAddfdChild(t *testing.T) {
	base := testenv.InSubprocess(t)
	allowed := filepath.Join(base, "allowed")
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	l, err := gate.Install(bwrap.Program(gate.EntryRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsFor(true))))))
	if err != nil {
		fmt.Printf("install failed: %v\n", err)
		return
	}
	if err := gate.SendFd(3, l); err != nil {
		t.Fatal(err)
	}
	unix.Close(l)
	unix.Close(3)
	wrong, failed := 0, 0
	for i := range 200 {
		p := filepath.Join(allowed, fmt.Sprintf("f%d", i))
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			failed++
			continue
		}
		var got, want unix.Stat_t
		if unix.Fstat(fd, &got) != nil || unix.Stat(p, &want) != nil || got.Dev != want.Dev || got.Ino != want.Ino {
			wrong++
			fmt.Printf("open %s: descriptor %d is not the file\n", p, fd)
			continue // not ours to close
		}
		unix.Close(fd)
	}
	fmt.Printf("result addfd %d %d\n", wrong, failed)
}
