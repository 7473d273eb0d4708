package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestGoWithoutGhostVCS: go build is told not to stamp VCS facts exactly
// where a protected .git that does not exist on the host stands above
// the working directory (native and bwrap hold an empty mount point
// there), and a GOFLAGS that names -buildvcs is left alone.
func TestGoWithoutGhostVCS(t *testing.T) {
	ws, repo := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	for _, c := range []struct {
		ws   string
		env  []string
		want string
	}{
		{ws, []string{"GOFLAGS=-mod=mod"}, "GOFLAGS=-mod=mod -buildvcs=false"},
		{ws, nil, "GOFLAGS=-buildvcs=false"},
		{ws, []string{"GOFLAGS=-buildvcs=true"}, "GOFLAGS=-buildvcs=true"},
		{repo, []string{"GOFLAGS=-mod=mod"}, "GOFLAGS=-mod=mod"},
	} {
		canon, err := policy.Canonicalize(policy.FsSandboxPolicy{WritableRoots: []string{c.ws},
			ReadonlyRoots: []string{filepath.Join(c.ws, ".git")}, RestrictWrites: true})
		require.NoError(t, err)
		got := goWithoutGhostVCS(c.env, canon, filepath.Join(c.ws, "sub"))
		flags := ""
		for _, kv := range got {
			if len(kv) > 8 && kv[:8] == "GOFLAGS=" {
				flags = kv
			}
		}
		require.Equal(t, c.want, flags, "%s %v", c.ws, c.env)
	}
}
