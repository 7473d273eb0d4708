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
