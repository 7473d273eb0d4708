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

// TestProfileNativeArgv: the native backend's argv is what its launch
// executes, cordon as the init with its spec's descriptor, and the
// command apart; it was a placeholder, ["cordon-init", CMD...].
func TestProfileNativeArgv(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	exe, err := os.Executable()
	require.NoError(t, err)
	exe, err = filepath.EvalSymlinks(exe)
	require.NoError(t, err)
	for _, tt := range []struct {
		args []string
		fd   string
	}{
		{nil, "3"},
		{[]string{"--allow-domain", "example.com"}, "4"}, // after the proxy's socket
	} {
		args := append(append([]string{"profile", "--backend", "native", "--json"}, tt.args...), "--", "echo", "hi")
		code, out, errs := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, errs)
		var r struct {
			Argv, Command []string
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		require.Equal(t, []string{exe, "__cordon-init", tt.fd}, r.Argv)
		require.Equal(t, []string{"echo", "hi"}, r.Command)
	}
	code, out, errs := runCLI(t, "", "profile", "--backend", "native", "--", "echo", "hi")
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "argv:\n  "+exe+" __cordon-init 3\n")
	require.Contains(t, out, "descriptor 3 holds its spec")
	require.True(t, strings.Contains(out, "command:\n  echo hi\n"), out)
}
