package launcher

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/workspace"
)

func needLandlock(t *testing.T) {
	t.Helper()
	testenv.Need(t, "Landlock ABI 3 or later", landlock.ABIError(landlock.ABI()))
}

// TestLandlockLaunch runs the workspace preset through the landlock
// backend with the real plan: the build writes below existing
// directories, .git/hooks is not writable, a denied store in HOME is
// unreadable, nothing outside is writable, the command sees the backend's
// name.
func TestLandlockLaunch(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{"ws/.git/hooks", "ws/build/obj", "home/.ssh"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SECRET"), 0o600))
	p, err := workspace.Preset(ws, workspace.Options{Home: home})
	require.NoError(t, err)
	p.DeniedRoots = append(p.DeniedRoots, filepath.Join(home, ".ssh"))
	script := `echo o > build/obj/a.o && echo built
echo x > .git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN
cat "$H/.ssh/id_ed25519" 2>/dev/null
echo x > "$B/outside" 2>/dev/null && echo OUTSIDE-WRITTEN
echo "$CORDON_SANDBOX"`
	c := Command(p, "sh", "-c", script)
	c.Backend = BackendLandlock
	c.Dir = ws
	c.Env = append(os.Environ(), "H="+home, "B="+base)
	out, err := c.Output()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "built\nlandlock\n", string(out))
	require.FileExists(t, filepath.Join(ws, "build/obj/a.o"))
	require.NoFileExists(t, filepath.Join(ws, ".git/hooks/pre-commit"))
	require.NoFileExists(t, filepath.Join(base, "outside"))
}

// TestLandlockMetadataGate: Landlock does not cover chmod, chown, xattrs
// or times; the metadata gate decides them by the plan. A file outside the
// roots, a hook in the read-only .git and the frozen workspace directory
// keep their modes and times; a file in the workspace changes.
func TestLandlockMetadataGate(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755))
	for _, f := range []string{"outside", "ws/.git/hooks/pre-commit", "ws/f"} {
		require.NoError(t, os.WriteFile(filepath.Join(base, f), nil, 0o644))
	}
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	script := `chmod 600 "$B/outside" 2>/dev/null && echo OUTSIDE-CHMOD
touch -d 2001-01-01 "$B/outside" 2>/dev/null && echo OUTSIDE-TOUCH
chmod +x .git/hooks/pre-commit 2>/dev/null && echo HOOK-CHMOD
chmod 700 . 2>/dev/null && echo FROZEN-CHMOD
chmod 600 f && echo changed`
	c := Command(p, "sh", "-c", script)
	c.Backend = BackendLandlock
	c.Dir = ws
	c.Env = append(os.Environ(), "B="+base)
	out, err := c.Output()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "changed\n", string(out))
	mode := func(f string) os.FileMode {
		st, err := os.Stat(filepath.Join(base, f))
		require.NoError(t, err)
		return st.Mode().Perm()
	}
	require.Equal(t, os.FileMode(0o644), mode("outside"))
	require.Equal(t, os.FileMode(0o644), mode("ws/.git/hooks/pre-commit"))
	require.Equal(t, os.FileMode(0o755), mode("ws"))
	require.Equal(t, os.FileMode(0o600), mode("ws/f"))
	st, err := os.Stat(filepath.Join(base, "outside"))
	require.NoError(t, err)
	require.Greater(t, st.ModTime().Year(), 2001)
}

// TestLandlockInheritedFiles: a file the command inherits read-write (a
// log file in a read-only place, another user's, as the launcher accepts
// it) can be reopened through /proc/self/fd with the access its
// descriptor has; the file beside it stays unwritable.
func TestLandlockInheritedFiles(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		testenv.NotApplicable(t, "the log must belong to another user (the launcher refuses a file the sandbox's user owns outside the writable roots), which needs root")
	}
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	log := filepath.Join(base, "log")
	f, err := os.OpenFile(log, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o666)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Chown(12345, 12345))
	require.NoError(t, f.Chmod(0o666)) // whatever the umask
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sh", "-c", `echo reopened >> /proc/self/fd/3 && echo ok
echo x > "$B/other" 2>/dev/null && echo OTHER
true`)
	c.Backend = BackendLandlock
	c.Dir = ws
	c.Env = append(os.Environ(), "B="+base)
	c.ExtraFiles = []*os.File{f}
	var eb strings.Builder
	c.Stderr = &eb
	out, err := c.Output()
	require.NoError(t, err, "%s%s", out, eb.String())
	require.Equal(t, "ok\n", string(out))
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "reopened\n", string(b))
	require.NoFileExists(t, filepath.Join(base, "other"))
}

// TestLandlockAllowlist: under landlock an allowed host answers through
// the proxy, with its event, and a direct connect to the same server,
// past the proxy, reaches nothing (judged by the server's count).
func TestLandlockAllowlist(t *testing.T) {
	needLandlock(t)
	_, err := exec.LookPath("curl")
	testenv.Need(t, "curl", err)
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			go func() {
				defer c.Close()
				c.Read(make([]byte, 4096))
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	np, err := netpolicy.New([]string{"localhost:" + port}, nil)
	require.NoError(t, err)
	ws := t.TempDir()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)

	var mu sync.Mutex
	var evs []netproxy.Event
	c := Command(p, "sh", "-c", `curl -sS --noproxy '' "http://localhost:$0/"; echo " $?"`, port)
	c.Backend = BackendLandlock
	c.NetPolicy = np
	c.NetEvent = func(e netproxy.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }
	var eb strings.Builder
	c.Stderr = &eb
	out, err := c.Output()
	require.NoError(t, err, "%s%s", out, eb.String())
	require.Equal(t, "ok 0\n", string(out), eb.String())
	require.Equal(t, int32(1), hits.Load())
	mu.Lock()
	require.Len(t, evs, 1)
	require.True(t, evs[0].Allowed)
	require.Equal(t, "localhost", evs[0].Host)
	mu.Unlock()

	c = Command(p, "sh", "-c", `curl -sS -m 10 --noproxy '*' "http://127.0.0.1:$0/"; echo " $?"`, port)
	c.Backend = BackendLandlock
	c.NetPolicy = np
	eb.Reset()
	c.Stderr = &eb
	out, err = c.Output()
	require.NoError(t, err, "%s%s", out, eb.String())
	require.Equal(t, " 7\n", string(out), eb.String()) // curl: couldn't connect
	require.Contains(t, eb.String(), "Couldn't connect")
	require.Equal(t, int32(1), hits.Load(), "the direct connect reached the server")
}

// TestLandlockAllowlistSecondWall: with the connect gate left out (the
// mutation check's "metagate"), Landlock's TCP rule alone still admits
// the proxy's port only: a request through the proxy is served, a
// direct connect to another port is refused (EACCES, curl's exit 7),
// and the server behind it sees nothing.
func TestLandlockAllowlistSecondWall(t *testing.T) {
	needLandlock(t)
	if landlock.ABI() < 4 {
		testenv.NotApplicable(t, "Landlock before ABI 4 has no TCP rights: the gate is the only wall there")
	}
	_, err := exec.LookPath("curl")
	testenv.Need(t, "curl", err)
	testhook.LandlockWeaken = "metagate"
	t.Cleanup(func() { testhook.LandlockWeaken = "" })
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			go func() {
				defer c.Close()
				c.Read(make([]byte, 4096))
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	np, err := netpolicy.New([]string{"localhost:" + port}, nil)
	require.NoError(t, err)
	p, err := workspace.Preset(t.TempDir(), workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sh", "-c", `curl -sS --noproxy '' "http://localhost:$0/"; echo " $?"
curl -sS -m 10 --noproxy '*' "http://127.0.0.1:$0/"; echo " $?"`, port)
	c.Backend = BackendLandlock
	c.NetPolicy = np
	var eb strings.Builder
	c.Stderr = &eb
	out, err := c.Output()
	require.NoError(t, err, "%s%s", out, eb.String())
	require.Equal(t, "ok 0\n 7\n", string(out), eb.String())
	require.Equal(t, int32(1), hits.Load(), "the direct connect reached the server")
}

// TestLandlockKillsLeftovers: with KillLeftovers, what the command leaves
// running in the background (here in a session of its own) is killed
// when it ends. Run in a child process: it makes that process a
// subreaper that kills its every child.
func TestLandlockKillsLeftovers(t *testing.T) {
	requireLeftoverGone(t, "TestHelperLandlockLeftovers")
}

func TestHelperLandlockLeftovers(t *testing.T) {
	ws := testenv.InSubprocess(t)
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!`)
	c.Backend = BackendLandlock
	c.KillLeftovers = true
	out, err := c.Output()
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	// Still ours until reaped: it is gone only if it was killed and reaped.
	require.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "leftover %d", pid)
	os.Stdout.WriteString("\nLEFTOVER=" + strconv.Itoa(pid) + "\n")
}

// TestLandlockHostProcessesAndIPC: a landlock sandbox has no IPC, PID or
// mount namespace of its own; what those would keep from the host is
// judged on the host. A System V segment of the user keeps what it held,
// a process of the user keeps its limits, nice value, scheduling policy
// and CPUs, and a Unix socket listening inside a denied root is never
// connected to, with the network on.
func TestLandlockHostProcessesAndIPC(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws, secrets := filepath.Join(base, "ws"), filepath.Join(base, "secrets")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Mkdir(secrets, 0o700))

	key := 0x636f0000 | os.Getpid()&0xffff // a key of this test's own
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	require.NoError(t, err)
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	seg, err := unix.SysvShmAttach(id, 0, 0)
	require.NoError(t, err)
	defer unix.SysvShmDetach(seg)
	copy(seg, "HOST-SECRET\x00")

	victim := exec.Command("sleep", "300")
	require.NoError(t, victim.Start())
	defer func() { victim.Process.Kill(); victim.Wait() }()
	vpid := victim.Process.Pid
	before := hostView(t, vpid)

	sock := filepath.Join(secrets, "agent.sock")
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(lfd)
	require.NoError(t, unix.Bind(lfd, &unix.SockaddrUnix{Name: sock}))
	require.NoError(t, unix.Listen(lfd, 8))

	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	p.DeniedRoots = append(p.DeniedRoots, secrets)
	argv, env := testenv.SubprocessArgs("TestHelperLandlockHost", fmt.Sprintf("%d %d %s", key, vpid, sock))
	c := Command(p, argv[0], argv[1:]...)
	c.Backend = BackendLandlock
	c.Network = true
	c.Dir = ws
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("sandbox: %s", out)

	require.Equal(t, "HOST-SECRET\x00", string(seg[:12]), "the host's segment was written from the sandbox")
	require.Equal(t, before, hostView(t, vpid), "the host process's limits, priority or scheduling changed")
	// A connect that succeeded left its connection in the backlog.
	_, _, err = unix.Accept(lfd)
	require.ErrorIs(t, err, unix.EAGAIN, "a socket inside a denied root was connected to from the sandbox")
}

// hostView is what the sandbox must not change about process pid: its
// limits, nice value, scheduling policy and CPUs (/proc/PID/stat fields
// 19 and 41).
func hostView(t *testing.T, pid int) string {
	t.Helper()
	lim, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	require.NoError(t, err)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
	var cpus unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(pid, &cpus))
	return fmt.Sprintf("%s\nnice %s policy %s cpus %d", lim, f[16], f[38], cpus.Count())
}

// TestHelperLandlockHost is the sandbox's side: it tries each attack and
// prints what it got; the host judges.
func TestHelperLandlockHost(t *testing.T) {
	arg := testenv.InSubprocess(t)
	var key, pid int
	var sock string
	_, err := fmt.Sscan(arg, &key, &pid, &sock)
	require.NoError(t, err)
	if id, err := unix.SysvShmGet(key, 0, 0); err != nil {
		fmt.Println("shmget:", err)
	} else if seg, err := unix.SysvShmAttach(id, 0, 0); err != nil {
		fmt.Println("shmat:", err)
	} else {
		fmt.Printf("read %q\n", seg[:12])
		copy(seg, "SANDBOX-WROTE")
	}
	fmt.Println("prlimit:", unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 7, Max: 7}, nil))
	fmt.Println("setpriority:", unix.Setpriority(unix.PRIO_PROCESS, pid, 19))
	fmt.Println("setpriority user:", unix.Setpriority(unix.PRIO_USER, 0, 19))
	var one unix.CPUSet
	one.Set(0)
	fmt.Println("sched_setaffinity:", unix.SchedSetaffinity(pid, &one))
	_, _, e := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 5 /* SCHED_IDLE */, uintptr(unsafe.Pointer(new([8]byte))))
	fmt.Println("sched_setscheduler:", e)
	_, _, e = unix.Syscall(unix.SYS_IOPRIO_SET, 1, uintptr(pid), 3<<13)
	fmt.Println("ioprio_set:", e)
	// Its own limits, priority and CPUs stay its own to change.
	fmt.Println("own prlimit:", unix.Prlimit(0, unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0}, nil))
	fmt.Println("own setpriority:", unix.Setpriority(unix.PRIO_PROCESS, 0, 1))
	if c, err := net.Dial("unix", sock); err != nil {
		fmt.Println("connect:", err)
	} else {
		c.Close()
		fmt.Println("CONNECTED")
	}
}

// TestLandlockLeftoversWithoutFiles: a command that leaves a process
// running and lowers cordon run's RLIMIT_NOFILE to 0 (the soft limit:
// the helper raises it back afterwards) (the filter refuses
// that now; here it is let through) cannot keep its leftover alive: the
// scan opens nothing once the command has run.
func TestLandlockLeftoversWithoutFiles(t *testing.T) {
	requireLeftoverGone(t, "TestHelperLandlockLeftoversWithoutFiles")
}

func TestHelperLandlockLeftoversWithoutFiles(t *testing.T) {
	ws := testenv.InSubprocess(t)
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	testhook.Seccomp = func(network bool) []byte {
		r := landlockRules(network)
		r.SelfOnly = false
		return bwrap.Program(r)
	}
	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	c := Command(p, "sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; prlimit --pid $PPID --nofile=0:`)
	c.Backend = BackendLandlock
	c.KillLeftovers = true
	out, werr := c.Output()
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &lim))
	require.NoError(t, werr, "%s", out)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err, "%s", out)
	require.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "leftover %d", pid)
	os.Stdout.WriteString("\nLEFTOVER=" + strconv.Itoa(pid) + "\n")
}

// TestLandlockSessionKeyring: the command does not possess the
// launcher's session keyring, so a key only its possessor may view stays
// out of /proc/keys inside (keys of the same user that grant their user
// view stay visible: see the threat model).
func TestLandlockSessionKeyring(t *testing.T) {
	needLandlock(t)
	cmd := testenv.Subprocess(t, "TestHelperLandlockSessionKeyring", t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "KEYS-LISTED")
	require.NotContains(t, string(out), "cordon-possessor-only-")
}

func TestHelperLandlockSessionKeyring(t *testing.T) {
	ws := testenv.InSubprocess(t)
	// Keyrings are per thread: this one joins a keyring of its own,
	// holds the key, and execs the launch, whose every thread then has
	// that session keyring as a launcher started in it would.
	runtime.LockOSThread()
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		testenv.NotApplicable(t, "no kernel keyrings: "+errno.Error())
	}
	desc := fmt.Sprintf("cordon-possessor-only-%d", os.Getpid())
	id, err := unix.AddKey("user", desc, []byte("KEY-SECRET"), unix.KEY_SPEC_SESSION_KEYRING)
	require.NoError(t, err)
	require.NoError(t, unix.KeyctlSetperm(id, 0x3f000000)) // possessor: all; user, group, other: nothing
	argv, env := testenv.SubprocessArgs("TestHelperLandlockSessionKeyringLaunch", ws)
	keep := slices.DeleteFunc(os.Environ(), func(e string) bool {
		return slices.ContainsFunc(env, func(n string) bool {
			k, _, _ := strings.Cut(n, "=")
			return strings.HasPrefix(e, k+"=")
		})
	})
	t.Fatal(unix.Exec(argv[0], argv, append(keep, env...)))
}

func TestHelperLandlockSessionKeyringLaunch(t *testing.T) {
	ws := testenv.InSubprocess(t)
	proc, err := os.ReadFile("/proc/keys")
	require.NoError(t, err)
	require.Contains(t, string(proc), "cordon-possessor-only-", "the launcher itself sees its key")
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sh", "-c", `cat /proc/keys && echo KEYS-LISTED`)
	c.Backend = BackendLandlock
	out, err := c.Output()
	require.NoError(t, err, "%s", out)
	os.Stdout.Write(out)
}

// requireLeftoverGone runs helper in a child process, which launches a
// command leaving a process behind and prints it as LEFTOVER=pid, and
// checks that the process is gone once the child has returned.
func requireLeftoverGone(t *testing.T, helper string) {
	needLandlock(t)
	cmd := testenv.Subprocess(t, helper, t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, after, ok := strings.Cut(string(out), "LEFTOVER=")
	require.True(t, ok, "%s", out)
	pid, err := strconv.Atoi(strings.Fields(after)[0])
	require.NoError(t, err, "%s", out)
	require.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "the leftover %d still runs", pid)
}
