package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/native"
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
	// Which Landlock ABI is in force (or one wall), and its rules.
	require.Regexp(t, `\nlandlock: (ABI \d+ in force|.*one wall)`, out)
	if native.LandlockABI() >= native.MinLandlockABI {
		require.Regexp(t, `\n  read(, write)? beneath /\n`, out)
	}
}

// Inside a sandbox, 'cordon profile' says the command would run directly
// under the outer sandbox, as 'cordon run' does there, and does not try to
// fix up cordon's state directory, which the outer sandbox masks.
func TestProfileNestedForReal(t *testing.T) {
	testenv.RequireBwrap(t)
	out := runInside(t, "TestHelperProfileInside", "")
	require.Contains(t, out, "nested: this runs inside a cordon sandbox")
	require.Contains(t, out, "argv:\n  make test\n")
	require.Contains(t, out, "PROFILE-OK")
}

// TestHelperProfileInside runs 'cordon profile' inside a sandbox.
func TestHelperProfileInside(t *testing.T) {
	testenv.InSubprocess(t) // for TestProfileNestedForReal
	ws, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"profile", "--workspace", ws, "--", "make", "test"}, nil, &out, os.Stderr); code == 0 {
		out.WriteString("PROFILE-OK\n")
	}
	os.Stdout.Write(out.Bytes())
}
