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
	defer func(g time.Duration) { netStopGrace = g }(netStopGrace)
	stuck := make(chan struct{})
	defer close(stuck)
	for _, quit := range []bool{false, true} {
		// Without quit, the grace is what ends the wait; with it, the
		// grace is an hour, so only quit can.
		netStopGrace = 50 * time.Millisecond
		if quit {
			netStopGrace = time.Hour
		}
		n := &netSession{srv: &netproxy.Server{}}
		n.wg.Add(1)
		go func() { <-stuck; n.wg.Done() }() // a goroutine of the proxy that never ends
		done := false
		n.done = func() { done = true }
		q := make(chan struct{})
		if quit {
			close(q)
		}
		stopped := make(chan struct{})
		go func() { n.stop(q); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatalf("stop still waits (quit %v)", quit)
		}
		require.True(t, done, "the summary runs")
	}
}
