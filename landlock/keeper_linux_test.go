package landlock_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/landlock"
)

// keeperBound bounds the waits below for what the keeper does on its
// own time (a failure's bound, not a measure of speed).
const keeperBound = 15 * time.Second

// jobAndDaemon (a format, %[1]s the token) leaves a background job and a
// daemon that forked twice and called setsid running, each sleeping
// with the token as its command line, and returns once both run.
const jobAndDaemon = `rm -f job daemon
sh -c 'echo > job; exec sleep %[1]s' </dev/null >/dev/null 2>&1 &
( setsid sh -c 'echo > daemon; exec sleep %[1]s' </dev/null >/dev/null 2>&1 & )
while [ ! -e job ] || [ ! -e daemon ]; do sleep 0.01; done`

// start starts sh -c script in the sandbox, with stdout a pipe.
func (s *sandbox) start(t *testing.T, script string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	r := bwrap.RulesFor(bwrap.SocketsNoNamespace())
	r.NoUserns = true
	spec := &landlock.Spec{Plan: s.plan, Seccomp: bwrap.Program(r), Path: "/bin/sh", Argv: []string{"sh", "-c", script}}
	cmd, f, err := landlock.Command(context.Background(), spec, 0)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = []*os.File{f}
	cmd.Dir = s.ws
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// stdin a pipe held open until the test ends: a "read" waits.
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// line reads one line the command printed.
func line(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	l, err := r.ReadString('\n')
	require.NoError(t, err, "the command ended early")
	return strings.TrimSpace(l)
}

// token is a number unique to this test, for the sandbox's processes'
// command lines.
func token() string { return strconv.FormatInt(7e8+time.Now().UnixNano()%1e8, 10) }

// withToken are the host's live processes whose command line holds tok.
func withToken(tok string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(tok)) {
			out = append(out, e.Name()+" "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// TestKeeperExitStatus: the init's status is the command's, an exit code
// or the signal that killed it.
func TestKeeperExitStatus(t *testing.T) {
	s := newSandbox(t)
	for _, c := range []struct {
		script string
		code   int
		sig    syscall.Signal
	}{{"exit 0", 0, 0}, {"exit 7", 7, 0}, {"kill -TERM $$", -1, syscall.SIGTERM}, {"kill -KILL $$", -1, syscall.SIGKILL},
		{"kill -SEGV $$", -1, syscall.SIGSEGV}} {
		t.Run(c.script, func(t *testing.T) {
			cmd, out := s.start(t, c.script)
			io.Copy(io.Discard, out)
			err := cmd.Wait()
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if c.sig != 0 {
				require.True(t, ws.Signaled(), "%v: %v", ws, err)
				require.Equal(t, c.sig, ws.Signal())
				return
			}
			require.True(t, ws.Exited(), "%v", ws)
			require.Equal(t, c.code, ws.ExitStatus(), "stderr: %v", cmd.Stderr)
		})
	}
}

// TestKeeperForwardsSignals: a signal sent to the sandbox's process (the
// keeper, as the launcher sends it) reaches the command.
func TestKeeperForwardsSignals(t *testing.T) {
	s := newSandbox(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGWINCH} {
		t.Run(sig.String(), func(t *testing.T) {
			n := strings.TrimPrefix(unixName(sig), "SIG")
			cmd, out := s.start(t, `trap 'echo got-`+n+`; exit 3' `+n+`; sleep 1000 & echo ready; wait`)
			require.Equal(t, "ready", line(t, out))
			require.NoError(t, cmd.Process.Signal(sig))
			require.Equal(t, "got-"+n, line(t, out))
			io.Copy(io.Discard, out)
			var ee *exec.ExitError
			require.ErrorAs(t, cmd.Wait(), &ee)
			require.Equal(t, 3, ee.ExitCode())
		})
	}
}

func unixName(sig syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP",
		syscall.SIGUSR1: "USR1", syscall.SIGWINCH: "WINCH"}[sig]
}

// TestKeeperReapsOrphans: orphans reparented to the keeper while the
// command runs are reaped (no zombie stays below it), and what the
// command leaves running, a daemon that called setsid included, ends
// with it.
func TestKeeperReapsOrphans(t *testing.T) {
	s := newSandbox(t)
	tok := token()
	cmd, out := s.start(t, fmt.Sprintf(`i=0; while [ $i -lt 20 ]; do (sh -c 'exit 0' &); i=$((i+1)); done
`+jobAndDaemon+`
echo ready; read x`, tok))
	require.Equal(t, "ready", line(t, out))
	keeper := cmd.Process.Pid
	zombies := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			f := string(b)
			i := strings.LastIndexByte(f, ')')
			fs := strings.Fields(f[i+2:])
			if len(fs) > 1 && fs[0] == "Z" && fs[1] == strconv.Itoa(keeper) {
				n++
			}
		}
		return n
	}
	end := time.Now().Add(keeperBound)
	for zombies() > 0 && time.Now().Before(end) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Zero(t, zombies(), "zombies below the keeper")
	// The sleeps, and perhaps a shell that has not yet exec'd one.
	require.GreaterOrEqual(t, len(withToken(tok)), 2, "the job and the daemon run: %v", withToken(tok))
	cmd.Process.Signal(syscall.SIGTERM) // sh exits on it
	io.Copy(io.Discard, out)
	cmd.Wait()
	// The keeper killed and reaped them before it exited.
	require.Empty(t, withToken(tok))
}

// TestKeeperEndsWithTheLauncher: the keeper's parent killed with SIGKILL
// takes the whole sandbox with it. The parent is this test binary again
// (TestMain's envLaunch), started for the test to kill.
func TestKeeperEndsWithTheLauncher(t *testing.T) {
	s := newSandbox(t)
	tok := token()
	exe, _ := os.Executable()
	launcher := exec.Command(exe)
	launcher.Env = append(os.Environ(), envLaunch+"="+s.ws+"|"+tok)
	out, err := launcher.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	launcher.Stderr = &stderr
	require.NoError(t, launcher.Start())
	defer launcher.Wait()
	r := bufio.NewReader(out)
	l, err := r.ReadString('\n')
	require.NoError(t, err, "launcher: %s", stderr.String())
	require.Equal(t, "ready\n", l)
	require.GreaterOrEqual(t, len(withToken(tok)), 3, "the command, its job and its daemon run: %v", withToken(tok))
	require.NoError(t, launcher.Process.Kill())
	end := time.Now().Add(keeperBound)
	for len(withToken(tok)) > 0 && time.Now().Before(end) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, withToken(tok), "after the launcher was killed")
}

// envLaunch makes the test binary a launcher of a sandbox that leaves
// a job and a daemon running ("WS|TOKEN"): it prints "ready" once
// they run, and waits to be killed.
const envLaunch = "CORDON_LANDLOCK_TEST_LAUNCH"

func launchMain(arg string) error {
	ws, tok, _ := strings.Cut(arg, "|")
	plan, err := testPlan(ws)
	if err != nil {
		return err
	}
	r := bwrap.RulesFor(bwrap.SocketsNoNamespace())
	r.NoUserns = true
	script := fmt.Sprintf(jobAndDaemon+`
echo ready; exec sleep %[1]s`, tok)
	spec := &landlock.Spec{Plan: plan, Seccomp: bwrap.Program(r), Path: "/bin/sh", Argv: []string{"sh", "-c", script}}
	cmd, f, err := landlock.Command(context.Background(), spec, 0)
	if err != nil {
		return err
	}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = []*os.File{f}
	cmd.Dir = ws
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return err
	}
	return errors.New("the sandbox ended before the launcher was killed")
}

// TestKeeperFilter: the keeper's own filter refuses signals to it by
// number, apart from Landlock's signal scope (weakened away here, as a
// kernel before ABI 6 has none); without that filter they pass.
func TestKeeperFilter(t *testing.T) {
	s := newSandbox(t)
	exe, _ := os.Executable()
	r := bwrap.RulesFor(bwrap.SocketsNoNamespace())
	r.NoUserns = true
	for _, c := range []struct{ weaken, want string }{{"landlock", "EPERM"}, {"landlock,keeper-filter", "ok"}} {
		for _, call := range []string{"kill", "kill-group", "tgkill"} {
			spec := &landlock.Spec{Plan: s.plan, Seccomp: bwrap.Program(r), Path: exe, Argv: []string{exe}, Weaken: c.weaken}
			cmd, f, err := landlock.Command(context.Background(), spec, 0)
			require.NoError(t, err)
			var out, stderr bytes.Buffer
			cmd.Env = []string{envAct + "=keeper " + call}
			cmd.Stdout, cmd.Stderr = &out, &stderr
			cmd.ExtraFiles = []*os.File{f}
			require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
			f.Close()
			require.Equal(t, c.want, out.String(), "%s without %s", call, c.weaken)
		}
	}
}
