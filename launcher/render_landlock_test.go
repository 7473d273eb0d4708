package launcher

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestRenderLandlock: profile renders the landlock backend from this
// host's directories, freezing the workspace that holds a read-only .git,
// and refuses a domain allowlist it could not enforce.
func TestRenderLandlock(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := Render(context.Background(), policy.FsSandboxPolicy{}, BackendLandlock, false, nil, nil)
		require.ErrorContains(t, err, "Landlock is Linux's")
		return
	}
	defer func(f func() int) { landlockABI = f }(landlockABI)
	landlockABI = func() int { return 6 } // whatever this kernel has
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	p := policy.FsSandboxPolicy{WritableRoots: []string{ws}, ReadonlyRoots: []string{filepath.Join(ws, ".git")}, RestrictWrites: true}
	r, err := Render(context.Background(), p, BackendLandlock, false, nil, []string{"make"})
	require.NoError(t, err)
	require.Equal(t, BackendLandlock, r.Backend)
	require.Equal(t, []string{"make"}, r.Command)
	require.Equal(t, landlockInitArg, r.Argv[1])
	require.Contains(t, r.LandlockPlan.Frozen, ws)
	all := strings.Join(r.LandlockRules, "\n")
	require.Contains(t, all, "landlock ABI 6")
	require.Contains(t, all, "dir  "+ws+"/src: read, write")
	require.Contains(t, all, "nothing can be created, removed or renamed directly in "+ws+": it holds read-only "+ws+"/.git")

	np, err := netpolicy.New([]string{"example.com"}, nil)
	require.NoError(t, err)
	r, err = Render(context.Background(), p, BackendLandlock, false, np, nil)
	require.NoError(t, err)
	require.NotNil(t, r.Network)
	require.Contains(t, r.Network.Enforcement, "connects it itself")
	require.Contains(t, r.Seccomp, "decided by the launcher: chmod")
	require.True(t, strings.HasSuffix(r.Seccomp, ", connect, bind, listen"), r.Seccomp)
	require.Contains(t, r.Seccomp, "Unix datagram sockets")
	require.Contains(t, r.Seccomp, "IPv4 and IPv6 sockets other than TCP")

	landlockABI = func() int { return 0 }
	_, err = Render(context.Background(), p, BackendLandlock, false, nil, nil)
	require.ErrorContains(t, err, "offers no Landlock")
}
