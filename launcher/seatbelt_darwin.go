package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/seatbelt"
)

// seatbeltCmd writes the profile to a private file (profiles of thousands
// of roots do not fit in argv) and runs the command under sandbox-exec.
// Paths reach the profile only as -D parameters.
func (c *Cmd) seatbeltCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	prof, err := seatbelt.Render(canon, seatbelt.Options{Network: c.Network})
	if err != nil {
		return nil, nil, err
	}
	dir, err := runtimeDir()
	if err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp(dir, "profile-*.sb")
	if err != nil {
		return nil, nil, fmt.Errorf("seatbelt profile: %w", err)
	}
	release := func() { os.Remove(f.Name()) }
	if _, err := f.WriteString(prof.SBPL); err != nil {
		f.Close()
		release()
		return nil, nil, fmt.Errorf("seatbelt profile: %w", err)
	}
	f.Close()
	path := res.Path
	if path == "" {
		path = sandboxExec
	}
	argv := prof.Argv(f.Name(), append([]string{c.Path}, c.Args[1:]...))
	argv[0] = path
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = argv
	c.wire(cmd, env)
	return cmd, release, nil
}
