package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/runner"
	"github.com/cordon-sandbox/cordon/workspace"
)

// sandboxSpawner runs bash commands for the governed runner under the
// --workspace preset, the same sandbox as 'cordon run --workspace DIR'.
// backend "" means auto; with no usable backend the launch fails closed.
func sandboxSpawner(backend string) runner.Spawner {
	return func(ctx context.Context, dir, command string, readOnly []string, stdout, stderr io.Writer) (int, error) {
		comp, err := workspace.Compose(workspace.Spec{Workspace: dir, Home: os.Getenv("HOME"),
			ScanCache: launcher.ScanCacheDir(), Executables: workspace.Executables(), Path: os.Getenv("PATH"),
			Protect: readOnly})
		if err != nil {
			return -1, fmt.Errorf("workspace policy for %s: %w", dir, err)
		}
		cmd := launcher.CommandContext(ctx, comp.Policy, "/bin/sh", "-c", command)
		cmd.Backend = backend
		cmd.Dir = dir
		cmd.TmpDir, cmd.CacheDir = comp.TmpDir, comp.CacheDir
		cmd.IDs, cmd.Canonical = comp.Canonical.IDs(), comp.Canonical
		cmd.Stdout, cmd.Stderr = stdout, stderr
		// Output pipes held open by a backgrounded grandchild must not
		// hang the tool call past its timeout.
		cmd.WaitDelay = 2 * time.Second
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return shellStatus(ee.ProcessState), nil
		}
		if err != nil {
			return -1, err
		}
		return 0, nil
	}
}
