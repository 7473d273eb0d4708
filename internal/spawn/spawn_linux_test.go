package spawn

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSurvivesTheStartersThread: a child that dies with its parent
// (Pdeathsig) outlives the end of the thread whose goroutine asked for
// it when Start forked it; forked on such a thread itself, it does not.
func TestSurvivesTheStartersThread(t *testing.T) {
	start := func(viaSpawn bool) *exec.Cmd {
		cmd := exec.Command("/bin/sleep", "30")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		done := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if viaSpawn {
				done <- Start(cmd)
			} else {
				done <- cmd.Start()
			}
		}()
		require.NoError(t, <-done)
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd
	}
	// The control: children forked on threads that end (one of these
	// goroutines may run on the main thread, which the runtime never ends).
	killed := 0
	for range 4 {
		c := start(false)
		if st, err := waitFor(c, 2*time.Second); err == nil && st != nil {
			killed++
		}
	}
	t.Logf("%d of 4 control children died with their thread", killed)
	require.NotZero(t, killed, "no control child died with the thread that forked it: the mechanism this package guards against did not happen")
	for range 4 {
		c := start(true)
		st, _ := waitFor(c, 500*time.Millisecond)
		require.Nil(t, st, "forked on the spawning thread, the child must outlive the starter's thread")
	}
}

// waitFor returns cmd's state once it exits, nil when it is still
// running after d.
func waitFor(cmd *exec.Cmd, d time.Duration) (*syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		pid, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
		if err != nil {
			return nil, err
		}
		if pid == cmd.Process.Pid {
			return &ws, nil
		}
	}
	return nil, nil
}
