//go:build !linux

package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) landlockCmd(context.Context, *policy.Canonical, detect.Result, []string) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: landlock: %w", ErrNoBackend, errOS)
}

func killLeftovers(*os.File, int) error { return nil }
