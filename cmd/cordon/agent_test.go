package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// --agent NAME without --agents-root is the agent CLI's preset, in the
// current directory unless --workspace says otherwise.
func TestProfileAgentCLI(t *testing.T) {
	testenv.RequireBwrap(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".codex"), 0o700))
	require.NoError(t, os.MkdirAll(ws, 0o700))
	t.Setenv("HOME", home)
	t.Chdir(ws)
	code, out, stderr := runCLI(t, "", "profile", "--backend", "bwrap", "--json", "--agent", "codex", "--", "codex")
	require.Equal(t, 0, code, stderr)
	var r struct {
		Policy struct {
			WritableRoots, ReadonlyRoots []string
		}
		Network struct{ AllowDomains []string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.Contains(t, r.Policy.WritableRoots, ws)
	require.Contains(t, r.Policy.WritableRoots, filepath.Join(home, ".codex"))
	require.Contains(t, r.Policy.ReadonlyRoots, filepath.Join(home, ".codex/config.toml"))
	require.Equal(t, []string{"@openai"}, r.Network.AllowDomains)

	code, _, stderr = runCLI(t, "", "profile", "--agent", "vim", "--", "vim")
	require.Equal(t, exitCordonError, code)
	require.Contains(t, stderr, `--agent "vim": no such agent; known: claude-code, codex, gemini`)
}
