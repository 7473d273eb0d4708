package gemini

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`{"session_id":"s","transcript_path":"","cwd":"/w","hook_event_name":"BeforeTool","timestamp":"t",
		"tool_name":"read_many_files","tool_input":{"include":["src/**","~/.ssh/*"],"recursive":true}}`))
	require.NoError(t, err)
	require.Len(t, c.Requests, 2)
	require.Equal(t, "glob", c.Requests[1].Name)
	require.JSONEq(t, `{"pattern":"~/.ssh/*"}`, string(c.Requests[1].Arguments))
	c, err = Parse([]byte(`{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"src"}}`))
	require.NoError(t, err)
	updated, err := c.WithCommand("wrapped > x")
	require.NoError(t, err)
	require.JSONEq(t, `{"command":"wrapped > x","dir_path":"src"}`, string(updated))
	c, err = Parse([]byte(`{"cwd":"/w","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{},"tool_response":{}}`))
	require.NoError(t, err)
	require.False(t, c.Decide)
	for _, bad := range []string{`{"cwd":"/w","hook_event_name":"BeforeModel"}`, `{"cwd":"/w","hook_event_name":"BeforeTool"}`,
		`{"cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":"ls"}`} {
		_, err := Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}
