package launcher

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// The stub tests give each test a state directory of its own, hence a
// registry and a reaper of their own, which logs its sweeps
// (CORDON_REAPER_LOG). A test that checks a stub stays waits for the
// sweep that would have removed it, were the reaper wrong, and looks
// then; one that checks a stub goes waits for the sweep that removed it.

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

// holdSandboxScript is holdSandbox that runs script (in the workspace,
// the policy's first writable root) once released; done gets its output.
// It returns once the sandbox runs, its mounts made.
func holdSandboxScript(t *testing.T, p policy.FsSandboxPolicy, script string) (done chan string, release func()) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "go")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	p.ReadonlyRoots = append(p.ReadonlyRoots, filepath.Dir(fifo))
	c := Command(p, "sh", "-c", `echo up; read x < "$0"; cd "$1" && `+script, fifo, p.WritableRoots[0])
	r, w, err := os.Pipe()
	require.NoError(t, err)
	c.Stdout, c.Stderr = w, w
	require.NoError(t, c.Start())
	w.Close()
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "up\n", line)
	done = make(chan string, 1)
	go func() {
		rest, _ := io.ReadAll(br)
		c.Wait()
		r.Close()
		done <- string(rest)
	}()
	return done, func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		require.NoError(t, err)
		f.WriteString("\n")
		f.Close()
	}
}

// stubCase sets a stub test up: bwrap, the linger time, a registry of the
// test's own (a state directory) whose reaper logs to the returned file,
// a workspace, its policy and its .vscode, a protected name that does not
// exist.
func stubCase(t *testing.T, linger string) (ws string, p policy.FsSandboxPolicy, stub string, log reaperLog) {
	t.Helper()
	testenv.RequireBwrap(t)
	t.Setenv("CORDON_STUB_LINGER", linger)
	log = ownRegistry(t)
	ws = t.TempDir()
	return ws, workspacePolicy(t, ws), filepath.Join(ws, ".vscode"), log
}

// ownRegistry gives the launches that follow a state directory, hence a
// stub registry and a reaper, of their own, and returns the reaper's log.
func ownRegistry(t *testing.T) reaperLog {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() {
		// Masks are directories of mode 000: let TempDir's cleanup
		// remove them when it runs as another user than root.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	t.Setenv(state.EnvDir, filepath.Join(dir, "state"))
	log := reaperLog(filepath.Join(dir, "reaper.log"))
	t.Setenv(envReaperLog, string(log))
	return log
}

// reaperLog is the file a reaper logs its sweeps to.
type reaperLog string

// loggedSweep is one line of a reaper's log.
type loggedSweep struct {
	Event string `json:"event"`
	sweepResult
}

// sweeps reads the sweeps logged so far: the complete lines (a line the
// reaper is writing may be read in part).
func (l reaperLog) sweeps() ([]loggedSweep, error) {
	b, err := os.ReadFile(string(l))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []loggedSweep
	for {
		line, rest, complete := bytes.Cut(b, []byte("\n"))
		if !complete {
			return out, nil
		}
		b = rest
		var s loggedSweep
		if err := json.Unmarshal(line, &s); err != nil {
			return nil, fmt.Errorf("reaper log line %q: %w", line, err)
		}
		if s.Event == "sweep" {
			out = append(out, s)
		}
	}
}

// mark is the number of sweeps logged so far: waitSweep(mark, ...) looks
// only at those that come after.
func (l reaperLog) mark(t *testing.T) int {
	t.Helper()
	ss, err := l.sweeps()
	require.NoError(t, err)
	return len(ss)
}

// waitSweep waits for a sweep after the first `after` that satisfies ok,
// and returns it.
func (l reaperLog) waitSweep(t *testing.T, after int, why string, ok func(sweepResult) bool) sweepResult {
	t.Helper()
	var found sweepResult
	var err error
	require.Eventually(t, func() bool {
		var ss []loggedSweep
		if ss, err = l.sweeps(); err != nil {
			return true
		}
		for _, s := range ss[min(after, len(ss)):] {
			if ok(s.sweepResult) {
				found = s.sweepResult
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "no sweep of the reaper %s; its log:\n%s", why, l.dump())
	require.NoError(t, err)
	return found
}

// waitRemoved waits for the sweep that removes stub.
func (l reaperLog) waitRemoved(t *testing.T, after int, stub, why string) {
	t.Helper()
	l.waitSweep(t, after, "removed "+stub, func(s sweepResult) bool { return slices.Contains(s.Removed, stub) })
	_, err := os.Lstat(stub)
	require.True(t, os.IsNotExist(err), "%s: %s is still there after the sweep that removed it", why, stub)
}

// waitLeft waits for the reaper to leave, which it does once no holder
// file is left: then no stub of the registry is left either. After the
// last launch has ended, nothing starts another.
func (l reaperLog) waitLeft(t *testing.T) {
	t.Helper()
	dir, err := registryDir()
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(string(l))
		lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		var last loggedSweep
		if !bytes.HasSuffix(b, []byte("\n")) || json.Unmarshal(lines[len(lines)-1], &last) != nil || last.Event != "exit" {
			return false
		}
		lk, err := os.Open(reaperLockPath(dir))
		if err != nil {
			return false
		}
		defer lk.Close()
		return syscall.Flock(int(lk.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	}, 20*time.Second, 10*time.Millisecond, "the reaper did not leave; its log:\n%s", l.dump())
}

func (l reaperLog) dump() string {
	b, _ := os.ReadFile(string(l))
	return string(b)
}

func TestStubsOutliveTheFirstOfTwoSandboxes(t *testing.T) {
	testhook.NoEntryGate = true // the stubs' own test
	defer func() { testhook.NoEntryGate = false }()
	_, p, stub, log := stubCase(t, "0")
	_, releaseA := holdSandbox(t, p)
	require.DirExists(t, stub)
	_, releaseB := holdSandbox(t, p)
	at := log.mark(t)
	releaseA()
	s := log.waitSweep(t, at, "saw A end", func(s sweepResult) bool { return s.Ended > 0 })
	require.Equal(t, 1, s.Live, "B runs")
	require.NotContains(t, s.Removed, stub)
	require.DirExists(t, stub, "B still holds the stub")
	// B's mask still holds: nothing can be planted in .vscode.
	out, err := Command(p, "sh", "-c", `echo x > "$0"/settings.json || echo blocked`, stub).CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "blocked")
	at = log.mark(t)
	releaseB()
	log.waitRemoved(t, at, stub, "the reaper removes the stub once no sandbox holds it")
}

func TestStubsLingerForTheNextLaunch(t *testing.T) {
	testhook.NoEntryGate = true // the stubs' own test
	defer func() { testhook.NoEntryGate = false }()
	_, p, stub, log := stubCase(t, "3s")
	require.NoError(t, Command(p, "true").Run())
	fi1, err := os.Lstat(stub)
	require.NoError(t, err, "the stub stays for the next launch")
	require.NoError(t, Command(p, "true").Run())
	fi2, err := os.Lstat(stub)
	require.NoError(t, err)
	require.True(t, os.SameFile(fi1, fi2), "the second launch reused the stub")
	log.waitSweep(t, 0, "kept the stub lingering", func(s sweepResult) bool { return slices.Contains(s.Lingering, stub) })
	log.waitRemoved(t, 0, stub, "the reaper removes it after the linger time")
}

// F5 (conformance/FINDINGS.md): a stub held by a live sandbox is never
// removed for a killed launch that shared it; removing it would detach the
// live sandbox's mask.
func TestStubsOfAKilledLauncherAreRemovedByTheReaper(t *testing.T) {
	testhook.NoEntryGate = true // the stubs' own test
	defer func() { testhook.NoEntryGate = false }()
	ws, p, stub, log := stubCase(t, "0")
	done, releaseA := holdSandboxScript(t, p, `echo x > .vscode/settings.json 2>/dev/null && echo PLANTED; exit 0`)
	at := log.mark(t)
	killedLauncher(t, ws)
	s := log.waitSweep(t, at, "saw the killed launch end", func(s sweepResult) bool { return s.Ended > 0 })
	require.Equal(t, 1, s.Live, "A runs")
	require.NotContains(t, s.Removed, stub)
	require.DirExists(t, stub, "A still holds the stub")
	at = log.mark(t)
	releaseA()
	require.NotContains(t, <-done, "PLANTED", "A's mask held")
	log.waitRemoved(t, at, stub, "the reaper removes the stub once no sandbox holds it")

	// Alone, a killed launch's stubs go too.
	ws2 := t.TempDir()
	at = log.mark(t)
	killedLauncher(t, ws2)
	log.waitRemoved(t, at, filepath.Join(ws2, ".vscode"), "the reaper sweeps stubs of dead holders")
}

// Many launches in one workspace at once, started and ended in every
// order: each one's mask holds while it runs, and no stub is left.
func TestStubsUnderConcurrentLaunches(t *testing.T) {
	ws, p, stub, log := stubCase(t, "0")
	const n = 8
	for round := range 3 {
		errs := make(chan error, n)
		for i := range n {
			go func() {
				// Sleep a little, differently, so launches overlap and end
				// out of order.
				script := fmt.Sprintf(`sleep 0.0%d; echo x > .vscode/x 2>/dev/null && echo PLANTED; mkdir -p .idea/y 2>/dev/null && echo PLANTED; true`, (i*3+round)%10)
				c := Command(p, "sh", "-c", script)
				c.Dir = ws
				out, err := c.CombinedOutput()
				if err == nil && strings.Contains(string(out), "PLANTED") {
					err = fmt.Errorf("launch %d: a mask did not hold: %s", i, out)
				}
				errs <- err
			}()
		}
		for range n {
			require.NoError(t, <-errs)
		}
	}
	log.waitLeft(t)
	require.NoDirExists(t, stub, "the last launch out leaves no stub")
	require.NoDirExists(t, filepath.Join(ws, ".idea"), "the last launch out leaves no stub")
}

// F6 (conformance/FINDINGS.md): a sandbox launched with another state
// directory (another stub registry) mounts over the first one's stub
// without holding it; the first registry's reaper must leave it until
// that sandbox ends.
func TestStubsMountedByAnotherRegistryStay(t *testing.T) {
	testhook.NoEntryGate = true // the stubs' own test
	defer func() { testhook.NoEntryGate = false }()
	_, p, stub, log := stubCase(t, "0")
	_, releaseA := holdSandbox(t, p)
	ownRegistry(t)
	done, releaseB := holdSandboxScript(t, p, `echo x > .vscode/settings.json 2>/dev/null && echo PLANTED; exit 0`)
	at := log.mark(t)
	releaseA()
	log.waitSweep(t, at, "found the stub mounted over", func(s sweepResult) bool { return slices.Contains(s.Busy, stub) })
	require.DirExists(t, stub, "B mounts over it")
	at = log.mark(t)
	releaseB()
	require.NotContains(t, <-done, "PLANTED", "B's mask held")
	log.waitRemoved(t, at, stub, "registry 1's reaper removes it once B has ended")
}

// killedLauncher has a child test process launch a sandbox in ws and then
// SIGKILLs it: no cleanup runs, and bwrap dies with it (--die-with-parent).
func killedLauncher(t *testing.T, ws string) {
	t.Helper()
	child := testenv.Subprocess(t, "TestHelperLaunchAndHang", ws)
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child ended before its sandbox started")
	require.Equal(t, "started\n", line)
	require.DirExists(t, filepath.Join(ws, ".vscode"))
	require.NoError(t, child.Process.Kill())
	child.Wait()
}

func TestHelperLaunchAndHang(t *testing.T) {
	ws := testenv.InSubprocess(t)
	testhook.NoEntryGate = true // the stubs' own test
	defer func() { testhook.NoEntryGate = false }()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	// "started" comes from inside: bwrap has set up the sandbox, and with
	// it --die-with-parent (a launcher killed before that leaves bwrap
	// running the command to its end, with its mounts).
	c := Command(p, "sh", "-c", "echo started; exec sleep 60")
	c.Stdout = os.Stdout
	require.NoError(t, c.Start())
	c.Wait()
}

// TestSyncPidfdsSeesAnEndedHolder: a holder whose process ends between a
// sweep and the opening of its pidfd is reported, so the reaper sweeps
// again instead of sleeping until something else wakes it (a killed
// launch marks nothing done).
func TestSyncPidfdsSeesAnEndedHolder(t *testing.T) {
	live := exec.Command("sleep", "10")
	require.NoError(t, live.Start())
	defer func() { live.Process.Kill(); live.Wait() }()
	gone := exec.Command("true")
	require.NoError(t, gone.Run())

	fds := map[int]int{}
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	require.False(t, syncPidfds(fds, []int{live.Process.Pid}))
	require.Contains(t, fds, live.Process.Pid)
	require.True(t, syncPidfds(fds, []int{live.Process.Pid, gone.Process.Pid}), "the ended holder is reported")
	require.NotContains(t, fds, gone.Process.Pid)
	require.False(t, syncPidfds(fds, nil))
	require.Empty(t, fds, "pidfds of holders no longer live are closed")
}
