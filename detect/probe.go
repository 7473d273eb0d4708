package detect

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"time"
)

// probeEnd is how a probe process ended: at ctx's deadline, with an exit
// status, or not started at all (execErr).
type probeEnd struct {
	stderr   string
	exitCode int
	timedOut bool
	execErr  string
}

// runProbe runs a probe with a minimal PATH until ctx ends; stdout, if
// not nil, receives its output.
func runProbe(ctx context.Context, stdout io.Writer, name string, args ...string) probeEnd {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.WaitDelay = 250 * time.Millisecond // after a kill, do not wait on pipes a stray grandchild holds
	err := cmd.Run()
	end := probeEnd{stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		end.timedOut = true
	case errors.As(err, &ee):
		end.exitCode = ee.ExitCode()
	case err != nil:
		end.execErr = err.Error()
	}
	return end
}
