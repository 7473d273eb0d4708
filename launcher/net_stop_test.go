package launcher

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/netproxy"
)

// TestNetStopBounded: the end of a launch waits for its proxy at most
// netStopGrace, and not at all once quit is closed (SIGINT or SIGTERM
// after the sandbox has ended), whatever is still running.
func TestNetStopBounded(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	for _, quit := range []bool{false, true} {
		n := &netSession{srv: &netproxy.Server{}}
		n.wg.Add(1)
		go func() { <-stuck; n.wg.Done() }() // a goroutine of the proxy that never ends
		done := false
		n.done = func() { done = true }
		q := make(chan struct{})
		if quit {
			close(q)
		}
		start := time.Now()
		n.stop(q)
		took := time.Since(start)
		require.True(t, done, "the summary runs")
		if quit {
			require.Less(t, took, netStopGrace/2, "quit closed")
		} else {
			require.Less(t, took, 5*netStopGrace)
		}
	}
}
