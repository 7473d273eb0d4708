package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/runner"
)

// sandboxSpawner runs bash commands for the governed runner under the
// --workspace preset, the same sandbox as 'cordon run --workspace DIR'.
// backend "" means auto; with no usable backend the launch fails closed.
func sandboxSpawner(backend string) runner.Spawner {
	return func(ctx context.Context, workspace, command string, readOnly []string, stdout, stderr io.Writer) (int, error) {
		p, err := policy.Workspace(workspace, policy.WorkspaceOptions{ScanCache: launcher.ScanCacheDir()})
		if err != nil {
			return -1, fmt.Errorf("workspace policy for %s: %w", workspace, err)
		}
		p.ReadonlyRoots = append(p.ReadonlyRoots, readOnly...)
		cmd := launcher.CommandContext(ctx, p, "/bin/sh", "-c", command)
		cmd.Backend = backend
		cmd.Dir = workspace
		cmd.TmpDir = policy.PrivateTmpDir(p.WritableRoots[0])
		cmd.Stdout, cmd.Stderr = stdout, stderr
		// Output pipes held open by a backgrounded grandchild must not
		// hang the tool call past its timeout.
		cmd.WaitDelay = 2 * time.Second
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal()), nil
			}
			return ee.ExitCode(), nil
		}
		if err != nil {
			return -1, err
		}
		return 0, nil
	}
}
