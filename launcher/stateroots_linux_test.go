package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestRootsInsideTheStateDirectory: a root deeper than cordon's state
// directory would win over its deny; only the private TMPDIRs in its
// tmp/ are handed in. Refused, naming the root: the launcher's runtime
// directory, the masks, the audit key read-only, tmp/ itself.
func TestRootsInsideTheStateDirectory(t *testing.T) {
	testenv.RequireBwrap(t)
	ownStateDir(t)
	sd, err := state.Dir()
	require.NoError(t, err)
	sd, err = policy.Resolve(sd)
	require.NoError(t, err)
	ws := t.TempDir()
	for _, r := range []struct {
		dir      string
		writable bool
	}{{"run", true}, {"run/masks", true}, {"audit", false}, {"tmp", true}, {"cache", true}} {
		p := filepath.Join(sd, r.dir)
		require.NoError(t, os.MkdirAll(p, 0o700))
		pol := workspacePolicy(t, ws)
		if r.writable {
			pol.WritableRoots = append(pol.WritableRoots, p)
		} else {
			pol.ReadonlyRoots = append(pol.ReadonlyRoots, p)
		}
		err := Command(pol, "true").Run()
		require.ErrorContains(t, err, "root "+p+": inside cordon's state directory", r.dir)
	}
	// A private TMPDIR, in tmp/, is handed in as before.
	pol := workspacePolicy(t, ws)
	tmp := filepath.Join(sd, state.Tmp, "aaaaaaaaaaaa")
	pol.WritableRoots = append(pol.WritableRoots, tmp)
	c := Command(pol, "sh", "-c", `echo x > "$TMPDIR/f" && echo ok`)
	c.TmpDir = tmp
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "ok\n", string(out))

	// So is a private cache, in cache/, named by each tool's variable.
	pol = workspacePolicy(t, ws)
	cache := filepath.Join(sd, state.Cache, "aaaaaaaaaaaa")
	pol.WritableRoots = append(pol.WritableRoots, cache)
	c = Command(pol, "sh", "-c", `mkdir -p "$GOCACHE" && echo x > "$GOCACHE/f" && echo "$npm_config_cache"`)
	c.CacheDir = cache
	out, err = c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, filepath.Join(cache, "npm")+"\n", string(out))
	require.FileExists(t, filepath.Join(cache, "go-build", "f"))
	require.FileExists(t, filepath.Join(sd, state.Cache, ".aaaaaaaaaaaa.lock"), "held as a TMPDIR is")
}
