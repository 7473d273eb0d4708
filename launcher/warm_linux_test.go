package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// warmLaunch is a launch of sh -c script in a fresh workspace, native,
// its stdout a file; it returns the Cmd, the workspace and the file.
func warmLaunch(t *testing.T, script string) (*Cmd, string, *os.File) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	out, err := os.Create(filepath.Join(base, "out"))
	require.NoError(t, err)
	t.Cleanup(func() { out.Close() })
	c := Command(policy.FsSandboxPolicy{WritableRoots: []string{ws}, RestrictWrites: true}, "/bin/sh", "-c", script)
	c.Backend = BackendNative
	c.Dir = ws
	c.Env = append(os.Environ(), "WARM_CHECK=from-the-spec")
	c.Stdout = out
	return c, ws, out
}

func readOut(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return string(b)
}

// TestWarmTaken: an init started ahead runs the launch it fits, in the
// launch's environment, confined by its policy, as the sandbox's pid 1.
func TestWarmTaken(t *testing.T) {
	testenv.RequireNative(t)
	c, ws, out := warmLaunch(t, `echo "$WARM_CHECK"; cat /proc/1/comm; touch inside && echo wrote; touch ../outside 2>/dev/null || echo refused`)
	w, err := StartWarm(false, nil, out, nil)
	require.NoError(t, err)
	defer w.Close()
	c.Warm = w
	require.NoError(t, c.Run())
	require.True(t, w.taken)
	require.Equal(t, w.cmd.Process.Pid, c.Process.Pid, "the launch is the init started ahead")
	require.Equal(t, "from-the-spec\ncordon-init\nwrote\nrefused\n", readOut(t, out))
	require.FileExists(t, filepath.Join(ws, "inside"))
	require.NoFileExists(t, filepath.Join(filepath.Dir(ws), "outside"))
}

// TestWarmNotTaken: an init started for another launch (here: with the
// host's network) is ended, and the launch starts its own.
func TestWarmNotTaken(t *testing.T) {
	testenv.RequireNative(t)
	c, _, out := warmLaunch(t, `cat /proc/1/comm`)
	w, err := StartWarm(true, nil, out, nil)
	require.NoError(t, err)
	defer w.Close()
	c.Warm = w
	require.NoError(t, c.Run())
	require.NotNil(t, w.cmd.ProcessState, "ended and reaped")
	require.NotEqual(t, w.cmd.Process.Pid, c.Process.Pid)
	require.Equal(t, "cordon-init\n", readOut(t, out))
}

// TestWarmWithoutSpec: an init whose launch never comes exits when its
// spec's pipe closes, having built nothing and run nothing.
func TestWarmWithoutSpec(t *testing.T) {
	testenv.RequireNative(t)
	out, err := os.Create(filepath.Join(t.TempDir(), "err"))
	require.NoError(t, err)
	defer out.Close()
	w, err := StartWarm(false, nil, nil, out)
	require.NoError(t, err)
	w.send.Close()
	err = w.cmd.Wait()
	require.Error(t, err)
	require.Equal(t, 125, w.cmd.ProcessState.ExitCode())
	require.True(t, strings.HasPrefix(readOut(t, out), "cordon: sandbox: spec:"), readOut(t, out))
	w.taken = true // reaped here
}
