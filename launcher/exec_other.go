//go:build !linux

package launcher

import (
	"errors"
	"os/exec"
)

// execSupported: this system can hand the process over (Cmd.Exec).
const execSupported = false

func execInPlace(*exec.Cmd) error { return errors.ErrUnsupported }
