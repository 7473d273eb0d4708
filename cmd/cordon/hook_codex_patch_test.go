package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// A patch hunk behind a Unicode blank (issue 38.5), judged by the host:
// the hook decides the patch Codex's model sends, and what it does not
// deny is applied by Codex's own apply_patch (the real CLI where the
// end-to-end suite is on), as Codex would apply it after an ask under
// its approval policy. The user's ~/.bash_profile must stay as it was,
// and the ordinary hunk beside it is applied when it is alone.
func TestHookCodexPatchUnicodeBlank(t *testing.T) {
	codex := "" // before agentFixture moves HOME, where the CLIs are found
	if os.Getenv(testenv.EnvE2E) != "" {
		codex = testenv.AgentCLI(t, "codex", "codex")
	}
	home, _ := agentFixture(t)
	ws := filepath.Join(home, "src")
	profile := filepath.Join(home, ".bash_profile")
	require.NoError(t, os.WriteFile(profile, []byte("# mine\n"), 0o644))
	apply := func(t *testing.T, patch string) {
		if codex == "" {
			return
		}
		cmd := exec.Command(codex, "--codex-run-as-apply-patch", patch)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	for _, b := range []string{"\u00a0", "\u3000", "\u2028", "\u0085", "\v", "\f"} {
		patch := "*** Begin Patch\n*** Add File: notes.txt\n+hi\n" + b + "*** Add File: ../.bash_profile\n+echo pwned\n*** End Patch\n"
		code, stdout, stderr := runCLI(t, codexPayload(ws, "apply_patch", map[string]string{"command": patch}), "hook", "codex", "--no-audit")
		require.Equal(t, 0, code, stderr)
		decision, reason, _ := agentAnswer(t, "codex", stdout)
		if decision != "deny" {
			apply(t, patch)
		}
		got, err := os.ReadFile(profile)
		require.NoError(t, err)
		require.Equal(t, "# mine\n", string(got), "%q: the hook answered %s (%s)", b, decision, reason)
		require.Equal(t, "deny", decision, "%q: %s", b, reason)
	}
	// The work beside it: the ordinary hunk alone goes on to Codex's
	// approval policy and is applied.
	patch := "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n"
	code, stdout, stderr := runCLI(t, codexPayload(ws, "apply_patch", map[string]string{"command": patch}), "hook", "codex", "--no-audit")
	require.Equal(t, 0, code, stderr)
	decision, _, _ := agentAnswer(t, "codex", stdout)
	require.NotEqual(t, "deny", decision, stdout)
	apply(t, patch)
	if codex != "" {
		got, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
		require.NoError(t, err)
		require.Equal(t, "hi\n", string(got))
	}
}
