package launcher

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

func workspacePolicy(t *testing.T, ws string) policy.FsSandboxPolicy {
	t.Helper()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	return p
}

func TestOutputAndExitError(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	out, err := Command(workspacePolicy(t, ws), "sh", "-c", "echo $CORDON_SANDBOX").Output()
	require.NoError(t, err)
	// What auto takes: native where usable.
	require.Equal(t, detect.Detect(context.Background(), BackendAuto).Backend+"\n", string(out))

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

func TestExecReplacesTheProcess(t *testing.T) {
	testhook.NoEntryGate = true // with the gate to serve, the launcher stays
	defer func() { testhook.NoEntryGate = false }()
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	// A protected name that exists: its read-only bind, not the gate,
	// keeps it.
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".vscode"), 0o755))
	child := testenv.Subprocess(t, "TestHelperExec", ws)
	stdin, err := child.StdinPipe()
	require.NoError(t, err)
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, &out
	require.NoError(t, child.Start())
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "ready") }, 20*time.Second, 10*time.Millisecond, "%s", &out)
	// The child process is bwrap now, at the same pid.
	exe, err := os.Readlink("/proc/" + strconv.Itoa(child.Process.Pid) + "/exe")
	require.NoError(t, err)
	require.Equal(t, "bwrap", filepath.Base(exe))
	stdin.Close()
	err = child.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", &out)
	require.Equal(t, 7, ee.ExitCode(), "the sandbox's status is the process's: %s", &out)
	require.Contains(t, out.String(), "blocked", "confined: the protected name could not be written")
	require.NoFileExists(t, filepath.Join(ws, ".vscode", "x"))
}

func TestHelperExec(t *testing.T) {
	testhook.NoEntryGate = true // as TestExecReplacesTheProcess
	defer func() { testhook.NoEntryGate = false }()
	ws := testenv.InSubprocess(t) // for TestExecReplacesTheProcess
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := Command(p, "sh", "-c", `echo x > "$0"/.vscode/x 2>/dev/null || echo blocked; echo ready; read x; exit 7`, ws)
	c.Backend = BackendBwrap // the backend that hands the process over
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Were the tests run under nohup, Exec would keep the process: take
	// SIGHUP over and give it back, which clears the "ignored" mark.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	signal.Stop(hup)
	err = c.Exec()
	t.Fatalf("Exec returned: %v", err)
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
	argv, env := testenv.SubprocessArgs("TestHelperConnectUnix", sock)
	c := Command(workspacePolicy(t, t.TempDir()), argv[0], argv[1:]...)
	c.Env = append(os.Environ(), env...)
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
	sock := testenv.InSubprocess(t) // for TestNetworkOffRefusesHostUnixSockets
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stdout.WriteString("refused: " + err.Error() + "\n")
		return
	}
	c.Close()
	os.Stdout.WriteString("connected\n")
}

// TestIdentityCheck: a root swapped after the policy was composed refuses
// the launch, naming the root; an unchanged one launches, bound from its
// descriptor, and leaves no descriptor to the sandbox.
func TestIdentityCheck(t *testing.T) {
	testenv.RequireBwrap(t)
	dir, ws, comp := composedWorkspace(t)
	run := func() (string, error) {
		cmd := Command(comp.Policy, "sh", "-c", "ls /proc/self/fd; echo x > "+ws+"/f")
		cmd.Backend = BackendBwrap
		cmd.IDs, cmd.TmpDir = comp.Canonical.IDs(), comp.TmpDir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	require.NoError(t, err, out)
	require.Equal(t, "0\n1\n2\n3\n", out, "only stdio and ls's own directory descriptor")

	require.NoError(t, os.Rename(ws, ws+".real"))
	require.NoError(t, os.Mkdir(ws, 0o755))
	_, err = run()
	require.ErrorContains(t, err, "root "+ws+" changed after the policy was built")
	require.NoError(t, os.Remove(ws))
	require.NoError(t, os.Symlink(dir, ws))
	_, err = run()
	// Refused by the identity check, or first by the policy's own rule:
	// the roots below ws are protected names through a link the sandbox
	// may write.
	require.Error(t, err)
	require.Regexp(t, "root "+regexp.QuoteMeta(ws)+" changed after the policy was built|"+regexp.QuoteMeta(ws)+" is a symlink: ", err.Error())
	_, err = os.Stat(filepath.Join(dir, "f"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// composedWorkspace composes the workspace preset for dir/ws, a fresh
// directory.
func composedWorkspace(t *testing.T) (dir, ws string, comp *workspace.Composed) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws = filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	comp, err = workspace.Compose(workspace.Spec{Workspace: ws, Home: filepath.Join(dir, "home")})
	require.NoError(t, err)
	return dir, ws, comp
}

// TestIdentityCheckOnComposedView: a native launch given the composed
// policy's view (Cmd.Canonical) does not look the roots up again, so the
// init's own check refuses a root swapped since, for a directory or a
// symlink, and nothing is written where the swap points.
func TestIdentityCheckOnComposedView(t *testing.T) {
	testenv.RequireNative(t)
	dir, ws, comp := composedWorkspace(t)
	run := func() (string, error) {
		cmd := Command(comp.Policy, "sh", "-c", "echo x > "+ws+"/f")
		cmd.Backend = BackendNative
		cmd.IDs, cmd.Canonical, cmd.TmpDir = comp.Canonical.IDs(), comp.Canonical, comp.TmpDir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	require.NoError(t, err, out)

	require.NoError(t, os.Rename(ws, ws+".real"))
	require.NoError(t, os.Mkdir(ws, 0o755))
	out, err = run()
	require.Error(t, err)
	// Refused by the init's check.
	require.Regexp(t, "root "+regexp.QuoteMeta(ws)+" changed (while the sandbox was being prepared|after the policy was built)", out+err.Error())
	require.NoError(t, os.RemoveAll(ws))
	require.NoError(t, os.Symlink(dir, ws))
	out, err = run()
	require.Error(t, err)
	require.Regexp(t, "symbolic link|symlink was swapped in|changed while the sandbox was being prepared|"+regexp.QuoteMeta(ws)+" is a symlink: ", out+err.Error())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"ws", "ws.real"}, names, "nothing made where the link points")
	_, err = os.Stat(filepath.Join(ws+".real", "f"))
	require.NoError(t, err, "the first launch wrote its own workspace")
}

// A Cmd made as a literal, with Path and no Args, runs Path with no
// arguments, as os/exec does (it panicked).
func TestCmdLiteralWithoutArgs(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	c := &Cmd{Path: "/bin/true", Policy: p}
	require.NoError(t, c.Run())
}

// TestSwappableLinkAppearsBeforeLaunch: a directory above a read-only
// root, swapped for a symbolic link after the policy was built and
// before the launch, makes the launcher's own resolution refuse the
// launch (the name could be swapped again from inside), through bwrap
// and landlock, and nothing is written through the link.
func TestSwappableLinkAppearsBeforeLaunch(t *testing.T) {
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			if backend == BackendBwrap {
				testenv.RequireBwrap(t)
			} else {
				testenv.RequireLandlock(t)
			}
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			r := filepath.Join(dir, "R")
			for _, d := range []string{"d", "decoy", "src"} {
				require.NoError(t, os.MkdirAll(filepath.Join(r, d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(r, "d", "secret"), []byte("original\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(r, "decoy", "secret"), []byte("decoy\n"), 0o644))
			p := policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{r}, ReadonlyRoots: []string{filepath.Join(r, "d", "secret")}}
			c, err := policy.Canonicalize(p)
			require.NoError(t, err)
			require.NoError(t, os.Rename(filepath.Join(r, "d"), filepath.Join(r, "d.real")))
			require.NoError(t, os.Symlink("decoy", filepath.Join(r, "d")))
			cmd := Command(p, "sh", "-c", "echo x > "+filepath.Join(r, "src", "out"))
			cmd.Backend, cmd.IDs = backend, c.IDs()
			out, err := cmd.CombinedOutput()
			require.Error(t, err, string(out))
			require.Contains(t, err.Error(), filepath.Join(r, "d")+" is a symlink: ")
			require.NoFileExists(t, filepath.Join(r, "src", "out"))
			b, err := os.ReadFile(filepath.Join(r, "d.real", "secret"))
			require.NoError(t, err)
			require.Equal(t, "original\n", string(b))
		})
	}
}
