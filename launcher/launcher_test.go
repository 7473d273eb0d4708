package launcher

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

func workspacePolicy(t *testing.T, ws string) policy.FsSandboxPolicy {
	t.Helper()
	p, err := policy.Workspace(ws, policy.WorkspaceOptions{Home: t.TempDir()})
	require.NoError(t, err)
	return p
}

func TestOutputAndExitError(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	out, err := Command(workspacePolicy(t, ws), "sh", "-c", "echo $CORDON_SANDBOX").Output()
	require.NoError(t, err)
	require.Equal(t, "bwrap\n", string(out))

	_, err = Command(workspacePolicy(t, ws), "sh", "-c", "echo oops >&2; exit 3").Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode())
	require.Equal(t, "oops\n", string(ee.Stderr))
}

func TestCommandLookupErrorWaitsInErr(t *testing.T) {
	c := Command(policy.FsSandboxPolicy{}, "no-such-command-cordon")
	require.ErrorIs(t, c.Err, exec.ErrNotFound)
	require.ErrorIs(t, c.Run(), exec.ErrNotFound)
}

func TestContextCancelKillsSandbox(t *testing.T) {
	testenv.RequireBwrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := CommandContext(ctx, workspacePolicy(t, t.TempDir()), "sleep", "30").Run()
	require.Error(t, err)
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestOnlyStdioAndExtraFilesReachTheChild(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	// A descriptor without close-on-exec, as one inherited from a parent.
	fd, err := syscall.Open(ws, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	// ls itself, no shell: a shell holds fds of its own (pipelines, saved
	// descriptors). ls lists stdio, the ExtraFile (3) and its own listing (4).
	c := Command(workspacePolicy(t, ws), "ls", "-l", "/proc/self/fd")
	c.ExtraFiles = []*os.File{w}
	out, err := c.Output()
	require.NoError(t, err)
	fds := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		f := strings.Fields(line)
		fds[f[len(f)-3]] = f[len(f)-1]
	}
	require.Len(t, fds, 5, "stdio, the ExtraFile and ls's own listing: %s", out)
	require.Contains(t, fds["3"], "pipe:")
	require.True(t, strings.HasPrefix(fds["4"], "/proc/"), "fd 4 is ls reading /proc/self/fd: %s", out)
	// The ExtraFile works.
	c = Command(workspacePolicy(t, ws), "sh", "-c", "echo via-extra >&3")
	c.ExtraFiles = []*os.File{w}
	require.NoError(t, c.Run())
	w.Close()
	got := make([]byte, 64)
	n, _ := r.Read(got)
	require.Equal(t, "via-extra\n", string(got[:n]))
}

// holdSandbox starts a sandbox that waits until release is closed.
func holdSandbox(t *testing.T, p policy.FsSandboxPolicy) (done chan error, release func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "go")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	c := Command(p, "sh", "-c", `read x < "$0"`, fifo)
	p.ReadonlyRoots = append(p.ReadonlyRoots, filepath.Dir(fifo))
	c.Policy = p
	require.NoError(t, c.Start())
	done = make(chan error, 1)
	go func() { done <- c.Wait() }()
	return done, func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		require.NoError(t, err)
		f.WriteString("\n")
		f.Close()
		require.NoError(t, <-done)
	}
}

func TestStubsOutliveTheFirstOfTwoSandboxes(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	p := workspacePolicy(t, ws)
	stub := filepath.Join(ws, ".vscode")
	_, releaseA := holdSandbox(t, p)
	require.DirExists(t, stub)
	_, releaseB := holdSandbox(t, p)
	releaseA()
	require.DirExists(t, stub, "B still holds the stub")
	// B's mask still holds: nothing can be planted in .vscode.
	out, err := Command(p, "sh", "-c", `echo x > "$0"/settings.json || echo blocked`, stub).CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "blocked")
	releaseB()
	require.NoDirExists(t, stub, "the last sandbox out removes the stub")
}

func TestStubsOfACrashedLauncherAreRemovedByTheNext(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	if os.Getenv("CORDON_TEST_CRASH_CHILD") != "" {
		return
	}
	// A child test process launches a sandbox, then is SIGKILLed: no
	// cleanup runs, and bwrap dies with it (--die-with-parent).
	child := exec.Command(os.Args[0], "-test.run=^TestHelperLaunchAndHang$")
	child.Env = append(os.Environ(), "CORDON_TEST_CRASH_CHILD="+ws)
	var out bytes.Buffer
	child.Stdout = &out
	require.NoError(t, child.Start())
	stub := filepath.Join(ws, ".vscode")
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "started") }, 20*time.Second, 20*time.Millisecond)
	require.DirExists(t, stub)
	require.NoError(t, child.Process.Kill())
	child.Wait()
	require.DirExists(t, stub, "nobody cleaned up after the crash yet")
	require.NoError(t, Command(workspacePolicy(t, t.TempDir()), "true").Run())
	require.NoDirExists(t, stub, "the next launch sweeps stubs of dead holders")
}

func TestHelperLaunchAndHang(t *testing.T) {
	ws := os.Getenv("CORDON_TEST_CRASH_CHILD")
	if ws == "" {
		t.Skip("helper process for TestStubsOfACrashedLauncherAreRemovedByTheNext")
	}
	p, err := policy.Workspace(ws, policy.WorkspaceOptions{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sleep", "60")
	require.NoError(t, c.Start())
	os.Stdout.WriteString("started\n")
	c.Wait()
}

func TestNoBackendFailsClosed(t *testing.T) {
	c := Command(policy.FsSandboxPolicy{}, "true")
	c.Backend = BackendSeatbelt
	if _, err := os.Stat(sandboxExec); err == nil {
		t.Skip("this host has sandbox-exec")
	}
	err := c.Run()
	require.True(t, errors.Is(err, ErrNoBackend), "%v", err)
}

func TestCleanEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "AWS_SECRET_ACCESS_KEY=s", "LC_ALL=C", "FOO=1", "BAR=2"}
	got := CleanEnv(env, []string{"FOO", "BAZ=3", "MISSING"})
	require.ElementsMatch(t, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "FOO=1", "BAZ=3"}, got)
}

func TestNetworkOffRefusesHostUnixSockets(t *testing.T) {
	testenv.RequireBwrap(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, os.Chmod(sock, 0o777))
	accepted := make(chan bool, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err == nil
	}()
	// The test binary itself makes the attempt inside the sandbox.
	c := Command(workspacePolicy(t, t.TempDir()), os.Args[0], "-test.run=^TestHelperConnectUnix$")
	c.Env = append(os.Environ(), "CORDON_TEST_CONNECT="+sock)
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "refused:", "the attempt must have run")
	require.NotContains(t, string(out), "connected")
	select {
	case <-accepted:
		t.Fatal("the sandbox reached a Unix socket on the host with the network off")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestHelperConnectUnix(t *testing.T) {
	sock := os.Getenv("CORDON_TEST_CONNECT")
	if sock == "" {
		t.Skip("helper process for TestNetworkOffRefusesHostUnixSockets")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stdout.WriteString("refused: " + err.Error() + "\n")
		return
	}
	c.Close()
	os.Stdout.WriteString("connected\n")
}
