//go:build linux

package launcher

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countWriter counts what it is given and keeps nothing.
type countWriter struct{ n atomic.Int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// TestTtyDrainBounded: a process left holding the pty after the command
// ends, writing without pause (no pid namespace ends it: backend none
// here, Seatbelt on macOS), does not keep Wait draining its output
// forever. The writer ends by itself once the pty is closed (echo fails).
func TestTtyDrainBounded(t *testing.T) {
	ws := t.TempDir()
	// The command ends only once the writer ignores the hang-up its
	// session leader's end sends.
	cmd := Command(workspacePolicy(t, ws), "sh", "-c", `(trap '' HUP; : > "$1/ready"; while echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; do :; done) &
while [ ! -e "$1/ready" ]; do :; done; exit 0`, "sh", ws)
	cmd.Backend = BackendNone
	var out countWriter
	cmd.Stdin, cmd.Stdout, cmd.Tty = strings.NewReader(""), &out, true
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	select {
	case <-done:
		t.Logf("Wait returned after %v, %d bytes relayed", time.Since(start).Round(time.Millisecond), out.n.Load())
	case <-time.After(20 * time.Second):
		t.Fatalf("Wait still drains 20s on (%d bytes relayed)", out.n.Load())
	}
}
