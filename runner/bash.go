package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/permission"
)

// Spawner runs a shell command in workspace, confined by the kernel
// sandbox with the paths in readOnly read-only, and returns its exit code.
// A non-nil error means it could not be run (or was killed by ctx).
type Spawner func(ctx context.Context, workspace, command string, readOnly []string, stdout, stderr io.Writer) (exitCode int, err error)

// Bash configures the bash handler.
type Bash struct {
	Spawn     Spawner
	Workspace string
	// ReadOnly lists paths the command must not change even inside the
	// workspace: the runner's audit log and its anchor ((*audit.Log).Protect),
	// so that a command cannot rewrite the trail of the calls around it.
	ReadOnly  []string
	Timeout   time.Duration // 0: DefaultTimeout
	MaxOutput int           // 0: DefaultMaxOutput
}

const (
	DefaultTimeout   = 2 * time.Minute
	DefaultMaxOutput = 64 << 10
)

// Handler returns the bash handler: a non-zero exit, a timeout and a spawn
// failure are errors (FAILED results), with whatever output there was.
func (b Bash) Handler() Handler {
	return func(ctx context.Context, call *permission.Call) (string, error) {
		if b.Spawn == nil {
			return "", errors.New("bash: no sandbox to run commands in")
		}
		timeout, max := b.Timeout, b.MaxOutput
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		if max <= 0 {
			max = DefaultMaxOutput
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out := &capped{max: max}
		code, err := b.Spawn(ctx, b.Workspace, call.Command, b.ReadOnly, out, out)
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return out.String(), fmt.Errorf("bash: %q timed out after %s", short(call.Command), timeout)
		case err != nil:
			return out.String(), fmt.Errorf("bash: run %q: %w", short(call.Command), err)
		case code != 0:
			return out.String(), fmt.Errorf("bash: %q exited with status %d", short(call.Command), code)
		}
		return out.String(), nil
	}
}

func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}

// capped keeps the first max bytes written to it (stdout and stderr share
// it, from two goroutines) and counts the rest.
type capped struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
	} else {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.dropped += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		return string(c.buf) + fmt.Sprintf("\n[%d more bytes of output dropped]", c.dropped)
	}
	return string(c.buf)
}
