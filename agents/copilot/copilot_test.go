package copilot

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Both payload formats, toolArgs as a JSON string or an object, and a
// list of paths split into one request per path.
func TestParse(t *testing.T) {
	for _, in := range []string{
		`{"sessionId":"s","timestamp":1,"cwd":"/w","toolName":"view","toolArgs":"{\"path\":\"/w/a\"}"}`,
		`{"sessionId":"s","timestamp":1,"cwd":"/w","toolName":"view","toolArgs":{"path":"/w/a"}}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","timestamp":"t","cwd":"/w","tool_name":"view","tool_input":{"path":"/w/a"}}`,
	} {
		c, err := Parse([]byte(in))
		require.NoError(t, err, in)
		require.True(t, c.Decide)
		require.Equal(t, "view", c.Tool)
		require.Len(t, c.Requests, 1)
		require.JSONEq(t, `{"path":"/w/a"}`, string(c.Requests[0].Arguments))
	}
	c, err := Parse([]byte(`{"cwd":"/w","toolName":"grep","toolArgs":{"pattern":"x","paths":["/w/a","/w/.ssh"]}}`))
	require.NoError(t, err)
	require.Len(t, c.Requests, 2)
	require.JSONEq(t, `{"pattern":"x","paths":"/w/.ssh"}`, string(c.Requests[1].Arguments))
	c, err = Parse([]byte(`{"cwd":"/w","toolName":"bash","toolArgs":{"result":1},"toolResult":{"resultType":"success","textResultForLlm":"ok"}}`))
	require.NoError(t, err)
	require.False(t, c.Decide)
	for _, bad := range []string{`{"cwd":"/w"}`, `{"cwd":"/w","toolName":"a","tool_name":"b"}`, `{"hook_event_name":"sessionStart","cwd":"/w"}`,
		`{"cwd":"/w","toolName":"bash","toolArgs":"not json"}`} {
		_, err := Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}
