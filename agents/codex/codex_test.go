package codex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// A patch as Codex's apply_patch tool takes it: every header that names
// a file is decided, a padded header line included (Codex trims the line
// before it matches the marker).
func TestPatchPaths(t *testing.T) {
	patch := "*** Begin Patch\n" +
		"*** Add File: a.txt\n+*** Add File: not-a-header\n" +
		"  *** Update File: src/main.go  \n*** Move to: /elsewhere/main.go\n@@\n-x\n+y\n" +
		"*** Delete File: .git/hooks/pre-commit\r\n" +
		"*** Update File:  spaced\n" +
		"*** End Patch"
	got := PatchPaths(patch)
	want := []string{"a.txt", "src/main.go", "/elsewhere/main.go", ".git/hooks/pre-commit", " spaced"}
	require.Empty(t, cmp.Diff(want, got))
}

// Codex trims a header line with Rust's str::trim: a hunk behind any
// Unicode white space is a hunk (Codex 0.171 applies it), so its path is
// decided; one behind a character Rust does not trim is not a header.
func TestPatchPathsUnicodeBlank(t *testing.T) {
	for _, b := range []string{"\u00a0", "\u3000", "\u2028", "\u0085", "\v", "\f", "\u1680", "\u202f", "\u205f", "\u2009", " \t"} {
		patch := "*** Begin Patch\n*** Add File: notes.txt\n+hi\n" + b + "*** Add File: ../.bash_profile" + b + "\n+x\n*** End Patch"
		require.Equal(t, []string{"notes.txt", "../.bash_profile"}, PatchPaths(patch), "%q", b)
	}
	require.Equal(t, []string{"a"}, PatchPaths("*** Add File: a\n\u200b*** Add File: b\n\ufeff*** Add File: c"))
	// A move line is matched as written: white space after its path is
	// part of the name Codex moves to.
	require.Equal(t, []string{"x", "y", "y\u00a0"}, PatchPaths("*** Update File: x\n*** Move to: y\u00a0\r\n"))
}

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`{"session_id":"s","turn_id":"1","cwd":"/w","hook_event_name":"PreToolUse","model":"m","permission_mode":"default",
		"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: x\n+1\n*** End Patch"},"tool_use_id":"call_1","transcript_path":null}`))
	require.NoError(t, err)
	require.True(t, c.Decide)
	require.Len(t, c.Requests, 1)
	require.JSONEq(t, `{"path":"x"}`, string(c.Requests[0].Arguments))
	require.Equal(t, "", c.ShellKey) // a patch is not rewritten
	c, err = Parse([]byte(`{"cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_2"}`))
	require.NoError(t, err)
	cmd, ok := c.Command()
	require.True(t, ok)
	require.Equal(t, "ls", cmd)
	for _, bad := range []string{`{"hook_event_name":"Stop","cwd":"/w"}`, `{"hook_event_name":"PreToolUse","cwd":"/w"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"patch":"x"}}`,
		`{"HOOK_EVENT_NAME":"PreToolUse"}`} {
		_, err := Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}
