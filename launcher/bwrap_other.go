//go:build !linux

package launcher

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) bwrapCmd(context.Context, *policy.Canonical, detect.Result, []string, *registry) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: bwrap: %w", ErrNoBackend, errOS)
}

func (c *Cmd) nativeCmd(context.Context, *policy.Canonical, detect.Result, []string, *registry) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("%w: native: %w", ErrNoBackend, errOS)
}

// registry is Linux's stub registry (stubs_linux.go); bwrap runs nowhere
// else.
type registry struct{}

func openRegistry() (*registry, error) { return &registry{}, nil }

func (*registry) unlock() {}

func (*registry) removedSince(time.Time) bool { return false }
