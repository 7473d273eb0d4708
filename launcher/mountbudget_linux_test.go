package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestMountBudget: a launch whose mounts would pass fs.mount-max (a test
// hook stands for the host's, which a test must not lower) is refused
// before any mount, naming the numbers and the fix, and makes nothing;
// under the real limit the same launch runs.
func TestMountBudget(t *testing.T) {
	for _, b := range []string{BackendNative, BackendBwrap} {
		t.Run(b, func(t *testing.T) {
			if b == BackendNative {
				testenv.RequireNative(t)
			} else {
				testenv.RequireBwrap(t)
			}
			ws := t.TempDir()
			p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
			require.NoError(t, err)
			run := func() ([]byte, error) {
				c := Command(p, "sh", "-c", "echo made > made && echo ran")
				c.Dir, c.Backend = ws, b
				return c.CombinedOutput()
			}
			testhook.MountMax = 1
			out, err := run()
			testhook.MountMax = 0
			require.Error(t, err, "%s", out)
			require.Contains(t, err.Error(), "fs.mount-max is 1")
			require.Contains(t, err.Error(), "sysctl fs.mount-max=")
			require.NoFileExists(t, filepath.Join(ws, "made"))
			out, err = run()
			require.NoError(t, err, "%s", out)
			require.Equal(t, "ran\n", string(out))
			b, err := os.ReadFile(filepath.Join(ws, "made"))
			require.NoError(t, err)
			require.Equal(t, "made\n", string(b))
		})
	}
}
