//go:build unix

package audit

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A lock held on the log file itself, as a sandboxed process that can
// read the log could hold one, stalls neither an append nor a verify:
// cordon's lock is a file of its state directory.
func TestLockOnTheLogStallsNothing(t *testing.T) {
	path := writeLog(t, 1)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	done := make(chan error, 1)
	go func() {
		l, err := Open(path, testKey)
		if err == nil {
			err = l.Append(KindRequest, "t", map[string]int{"i": 1})
		}
		if err == nil {
			_, err = Verify(path, testKey)
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second): // a hang, not a measurement
		t.Fatal("append or verify waits on a lock held on the log file")
	}
}
