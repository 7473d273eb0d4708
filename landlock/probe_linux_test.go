package landlock_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/landlock"
)

// TestProbeLeavesNoDirectory: a process that a signal ends during the
// probe (held until the directory is gone, then raised again), and one
// killed outright there (its directory removed by the next probe), leave
// no probe directory in the temporary directory.
func TestProbeLeavesNoDirectory(t *testing.T) {
	testenv.Need(t, "Landlock", landlock.ABIError(landlock.ABI()))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := testenv.Subprocess(t, "TestHelperProbeSignalled", sig.String())
			tmp := filepath.Join(t.TempDir(), "tmp")
			require.NoError(t, os.Mkdir(tmp, 0o700))
			cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "the child was not ended: %v\n%s", err, out)
			ws := ee.Sys().(syscall.WaitStatus)
			require.True(t, ws.Signaled() && ws.Signal() == sig, "the child ended with %v, not %v\n%s", ws, sig, out)
			left, _ := os.ReadDir(tmp)
			if sig == syscall.SIGKILL {
				// Nothing can run on SIGKILL: the directory stays until
				// this user's next probe, here.
				require.Len(t, left, 1, "the killed probe's directory")
				landlock.SweepProbes(tmp)
				left, _ = os.ReadDir(tmp)
			}
			require.Empty(t, left, "left in the temporary directory")
		})
	}
}

func TestHelperProbeSignalled(t *testing.T) {
	name := testenv.InSubprocess(t)
	var sig syscall.Signal
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		if s.String() == name {
			sig = s
		}
	}
	testhook.LandlockProbe = func(string) { unix.Kill(os.Getpid(), sig) }
	_, err := landlock.Probe(context.Background(), 30*time.Second)
	// Reached only if the signal did not end the process once the probe
	// was over: that is the failure.
	t.Fatalf("the probe returned (%v) and %v did not end the process", err, sig)
}
