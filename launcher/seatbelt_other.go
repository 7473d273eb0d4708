//go:build !darwin

package launcher

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) seatbeltCmd(context.Context, *policy.Canonical, detect.Result, []string) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: seatbelt: %w", ErrNoBackend, errOS)
}
