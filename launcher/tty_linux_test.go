package launcher

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// With no terminal among its stdio, Cmd.Tty gives the command a pty fed
// from Stdin and copied to Stdout: a controlling one, since this test
// binary (which links the launcher) is readable inside.
// Both helpers are tried: setsid(1), and this program's own.
func TestTtyWithoutACallerTerminal(t *testing.T) {
	testenv.RequireBwrap(t)
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "setsid", true: "own-helper"}[own], func(t *testing.T) {
			testhook.SkipTtySetsid = own
			defer func() { testhook.SkipTtySetsid = false }()
			ttyWithoutACallerTerminal(t)
		})
	}
}

func ttyWithoutACallerTerminal(t *testing.T) {
	ws := t.TempDir()
	cmd := Command(workspacePolicy(t, ws), "sh", "-c", `test -t 0 && test -t 1 && test -t 2 && echo ALLTTY
exec 3</dev/tty && echo DEVTTY
read -r x; echo "got[$x]"; stty size; exit 4`)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Tty = strings.NewReader("hello\n"), &out, true
	err := cmd.Run()
	require.Equal(t, 4, cmd.ProcessState.ExitCode(), "%v: %q", err, out.String())
	for _, want := range []string{"ALLTTY", "DEVTTY", "got[hello]"} {
		require.Contains(t, out.String(), want)
	}
	require.NotContains(t, out.String(), "warning")
}

// Where the launching program is not readable inside, bwrap cannot
// start the entry gate's helper, which every bwrap launch has (absent
// protected names are the gate's: there are no stubs to fall back on):
// the launch is refused before it starts, naming the fix, and the
// command never runs.
func TestTtyHelperDenied(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	p := workspacePolicy(t, ws)
	exe, err := ttyHelper(mustCanon(t, p))
	require.NoError(t, err)
	p.DeniedRoots = append(p.DeniedRoots, exe)
	cmd := Command(p, "sh", "-c", `echo RAN > ran`)
	cmd.Dir, cmd.Backend = ws, BackendBwrap
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Tty = strings.NewReader(""), &out, &errb, true
	err = cmd.Run()
	require.Error(t, err)
	require.Contains(t, err.Error(), "install cordon where the sandbox may read it")
	require.NoFileExists(t, filepath.Join(ws, "ran"))
}

func mustCanon(t *testing.T, p policy.FsSandboxPolicy) *policy.Canonical {
	t.Helper()
	c, err := canonicalize(p, nil)
	require.NoError(t, err)
	return c
}

// A process left behind that keeps writing to the pty (none is, through
// the Linux backends' pid namespaces; Seatbelt and --backend none have
// none) does not keep Wait reading its output: the drain after the
// command ends is bounded (drainMax).
func TestTtyDrainBounded(t *testing.T) {
	ws := t.TempDir()
	cmd := Command(workspacePolicy(t, ws), "sh", "-c", `(trap "" HUP; exec yes 2>/dev/null) & echo $! > pid; exit 3`)
	cmd.Backend, cmd.Dir = BackendNone, ws
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Tty = strings.NewReader(""), &out, true
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if b, rerr := os.ReadFile(filepath.Join(ws, "pid")); rerr == nil {
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	require.Equal(t, 3, cmd.ProcessState.ExitCode(), "%v", err)
	require.Less(t, took, 10*time.Second, "Wait returned %v after the command ended", took)
}
