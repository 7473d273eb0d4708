package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestHelperCLI is 'cordon' in a child process, for tests that signal it:
// its argument is the command line, as JSON.
func TestHelperCLI(t *testing.T) {
	var args []string
	if err := json.Unmarshal([]byte(testenv.InSubprocess(t)), &args); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	code := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli is a child process running cordon with args; prefix, when set,
// runs it through that program (nohup).
func cli(t *testing.T, prefix string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := testenv.Subprocess(t, "TestHelperCLI", string(b))
	if prefix != "" {
		cmd.Args = append([]string{prefix}, cmd.Args...)
		cmd.Path, err = exec.LookPath(prefix)
		require.NoError(t, err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// waitFor waits until file exists (the command inside has started).
func waitFor(t *testing.T, file string, out *bytes.Buffer) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(file); return err == nil }, 20*time.Second, 10*time.Millisecond, "%s", out)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

// Ctrl-C sent to cordon (SIGINT, no terminal) reaches the command's
// process group, as a terminal's reaches its foreground job: a shell
// waiting for a child ends with it, not after it.
func TestRunSIGINTReachesTheCommandsGroup(t *testing.T) {
	for _, backend := range []string{"bwrap", "native"} {
		t.Run(backend, func(t *testing.T) {
			testenv.RequireBackend(t, backend)
			ws := t.TempDir()
			// Not 'touch started; sleep 5; echo after' in one bash: a SIGINT
			// that reaches the group while bash forks sleep is taken by the
			// child before its exec, sleep then runs its course, and bash,
			// seeing its child end without the signal, goes on (bash's
			// "wait and cooperative exit"): "after", about a third of
			// the runs here, whatever cordon does. Here the group's
			// processes between bash and sleep are a dash that never
			// catches SIGINT.
			cmd, out := cli(t, "", "run", "--backend", backend, "--workspace", ws, "--", "bash", "-c", `sh -c 'touch started; exec sleep 5'; echo after`)
			cmd.Dir = ws
			require.NoError(t, cmd.Start())
			waitFor(t, filepath.Join(ws, "started"), out)
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			err := cmd.Wait()
			// Through bwrap, cordon has become bwrap (exec in place), which
			// the signal ends as it ends the sandbox.
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
				require.Equal(t, 128+int(syscall.SIGINT), exitCode(t, err), "%s", out)
			}
			require.NotContains(t, out.String(), "after")
		})
	}
}

// A signal the caller ignores stays ignored for the command: under nohup,
// a hang-up leaves the sandbox running to its end.
func TestRunNohupKeepsTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("nohup"); err != nil {
		t.Skip("no nohup here")
	}
	for _, backend := range []string{"bwrap", "native"} {
		t.Run(backend, func(t *testing.T) {
			testenv.RequireBackend(t, backend)
			ws := t.TempDir()
			cmd, out := cli(t, "nohup", "run", "--backend", backend, "--workspace", ws, "--", "sh", "-c", `touch started; sleep 1; echo ok > survived`)
			cmd.Dir = ws
			require.NoError(t, cmd.Start())
			waitFor(t, filepath.Join(ws, "started"), out)
			require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
			require.Equal(t, 0, exitCode(t, cmd.Wait()), "%s", out)
			b, err := os.ReadFile(filepath.Join(ws, "survived"))
			require.NoError(t, err, "%s", out)
			require.Equal(t, "ok\n", string(b))
		})
	}
}

// A process inside that sends pid 1 a signal the kernel would raise for a
// fault (SIGSEGV, SIGABRT, ...) does not crash the native init: the
// command runs on, and its status is cordon's.
func TestRunFaultSignalsToInit(t *testing.T) {
	testenv.RequireBackend(t, "native")
	ws := t.TempDir()
	code, out, stderr := runCLI(t, "", "run", "--backend", "native", "--workspace", ws, "--", "sh", "-c",
		`for s in SEGV ABRT BUS FPE ILL TRAP SYS; do kill -$s 1; done; sleep 0.2; echo alive; exit 4`)
	require.Equal(t, 4, code, stderr)
	require.Equal(t, "alive\n", out)
	require.False(t, strings.Contains(stderr, "goroutine"), stderr)
}
