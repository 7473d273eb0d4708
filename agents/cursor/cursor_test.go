package cursor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/permission"
)

func TestParseAndAnswer(t *testing.T) {
	c, err := Parse([]byte(`{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeReadFile","workspace_roots":["/w"],"file_path":"/w/.env","content":"X=1"}`))
	require.NoError(t, err)
	require.Equal(t, "/w", c.Cwd)
	require.JSONEq(t, `{"file_path":"/w/.env"}`, string(c.Requests[0].Arguments))
	// beforeReadFile reads permission only, allow or deny.
	out, err := Answer(c, permission.Decision{Action: permission.Ask, RuleID: "r", Reason: "x"}, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"permission":"deny"}`, string(out))
	c, err = Parse([]byte(`{"hook_event_name":"beforeShellExecution","workspace_roots":["/w"],"command":"ls","cwd":"/w/src"}`))
	require.NoError(t, err)
	require.Equal(t, "/w/src", c.Cwd)
	out, err = Answer(c, permission.Decision{Action: permission.Ask, RuleID: "bash.requires_approval", Reason: "x"}, nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"permission":"ask","user_message":"cordon bash.requires_approval: x","agent_message":"cordon bash.requires_approval: x"}`, string(out))
	for _, bad := range []string{`{"hook_event_name":"afterFileEdit"}`, `{"hook_event_name":"beforeShellExecution","cwd":"/w"}`, `{"hook_event_name":"beforeReadFile"}`} {
		_, err := Parse([]byte(bad))
		require.Error(t, err, bad)
	}
}
