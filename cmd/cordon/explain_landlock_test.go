package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/landlock"
)

// TestExplainLandlock: --backend landlock adds, per path, where that
// backend is stricter than the policy (a name directly in the workspace,
// which holds a read-only .git, cannot be made) or "as the model".
func TestExplainLandlock(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	code, _, errs := runCLI(t, "", "explain", "--backend", "bwrap", "/x")
	require.Equal(t, exitUsage, code, errs)
	require.Contains(t, errs, "only landlock is stricter than the policy")
	if runtime.GOOS != "linux" {
		return
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	den, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	code, out, errs := runCLI(t, "", "explain", "--backend", "landlock", "--workspace", ws, "--deny", den, ws+"/src/a.go", ws+"/new", den+"/key")
	if code != exitOK && strings.Contains(errs, "Landlock") {
		testenv.Need(t, "Landlock ABI 3 or later", errors.New(errs))
	}
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, ws+"/src/a.go\n  read: yes  write: yes")
	require.Contains(t, out, "  landlock: as the model\n")
	require.Contains(t, out, den+"/key\n  read: no")
	require.Contains(t, out, "  landlock: "+landlock.DeniedMetadata+"\n")
	require.Contains(t, out, "  landlock: "+ws+"/new: nothing can be created, removed or renamed directly in "+ws+": it holds read-only "+ws+"/.git")
}
