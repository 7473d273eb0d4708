//go:build !linux

package launcher

import (
	"io"
	"os/exec"

	"github.com/cordon-sandbox/cordon/internal/spawn"
)

// StartWarm fails: only the native backend (Linux) has an init to start
// ahead.
func StartWarm(network bool, stdin io.Reader, stdout, stderr io.Writer) (*Warm, error) {
	return nil, errNoWarm
}

// startInner starts the sandbox's process.
func (c *Cmd) startInner(inner *exec.Cmd) error { return spawn.Start(inner) }
