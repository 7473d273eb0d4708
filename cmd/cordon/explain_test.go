package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// TestExplainArguments: a flag after a path shapes the policy as one
// before it would (it was explained as a path, under an empty policy); an
// argument that cannot be answered leaves nothing on stdout, not the
// answers before it; an empty PATH is a usage error, not the current
// directory.
func TestExplainArguments(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("a.txt", nil, 0o600))
	require.NoError(t, os.Mkdir("src", 0o700))
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink(loop, loop))

	t.Run("flags after paths", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "explain", "a.txt", "--workspace", ".", "--json")
		require.Equal(t, exitOK, code, errs)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 1, "only a.txt is a path: %s", out)
		var v struct {
			Path  string `json:"path"`
			Write bool   `json:"write"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &v))
		require.True(t, v.Write, "a.txt is in the --workspace given after it: %s", out)
		require.NotContains(t, out, "--workspace")
	})
	t.Run("after -- a path", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "explain", "--workspace", ".", "--", "--json")
		require.Equal(t, exitOK, code, errs)
		require.Contains(t, out, filepath.Join(dir, "--json"))
	})
	t.Run("nothing half-written", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "explain", "--workspace", ".", "--json", "a.txt", loop, "src")
		require.Equal(t, exitCordonError, code, errs)
		require.Empty(t, out)
		require.Contains(t, errs, loop)
	})
	t.Run("empty path", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "explain", "--workspace", ".", "a.txt", "")
		require.Equal(t, exitUsage, code, errs)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errs, "cordon explain: an empty PATH"), errs)
	})
}
