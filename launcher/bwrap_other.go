//go:build !linux

package launcher

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) bwrapCmd(context.Context, *policy.Canonical, detect.Result, []string) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: bwrap: %w", ErrNoBackend, errOS)
}

func (c *Cmd) nativeCmd(context.Context, *policy.Canonical, detect.Result, []string) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: native: %w", ErrNoBackend, errOS)
}
