package launcher

import (
	"context"
	"errors"
	"os/exec"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
)

func (c *Cmd) seatbeltCmd(context.Context, *policy.Canonical, detect.Result, []string) (*exec.Cmd, func(), error) {
	return nil, nil, errors.New("seatbelt: launcher not wired yet")
}
