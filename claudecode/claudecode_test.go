package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/permission"
)

// fixture is a workspace with src/main.go and .git/hooks, HOME apart.
func fixture(t *testing.T) (ws string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", filepath.Join(base, "home"))
	ws = filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".github", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644))
	return ws
}

func decider(t *testing.T, ws string) *permission.Decider {
	t.Helper()
	d, err := permission.New(permission.Config{Workspace: ws})
	require.NoError(t, err)
	return d
}

func payload(t *testing.T, cwd, tool string, input map[string]any) *Payload {
	t.Helper()
	b, err := json.Marshal(input)
	require.NoError(t, err)
	return &Payload{HookEventName: PreToolUse, Cwd: cwd, ToolName: tool, ToolInput: b, ToolUseID: "toolu_1"}
}

func TestReadPayload(t *testing.T) {
	p, raw, err := ReadPayload(strings.NewReader(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"x"},"tool_use_id":"t1","cwd":"/w"}`))
	require.NoError(t, err)
	require.Equal(t, PostToolUse, p.HookEventName)
	require.Equal(t, "t1", p.ToolUseID)
	require.JSONEq(t, `{"command":"ls"}`, string(p.ToolInput))
	require.JSONEq(t, `{"stdout":"x"}`, string(p.ToolResponse))
	require.Contains(t, string(raw), `"tool_response"`)

	for _, tt := range []struct{ in, want string }{
		{"", "payload: empty input: a JSON object is expected"},
		{"[1]", "payload: a JSON object is expected, not an array"},
		{"not json", "payload: not valid JSON at line 1, column 2: invalid character 'o' in literal null (expecting 'u')"},
		{`"a string"`, "payload: a JSON object is expected, not a string"},
		// Claude Code's keys are snake_case: another case is not them
		// (encoding/json took it for them), and none may come twice.
		{`{"HOOK_EVENT_NAME":"PreToolUse","tool_name":"Bash"}`, `payload: "HOOK_EVENT_NAME" is not a key; did you mean "hook_event_name"?`},
		{`{"hook_event_name":"PreToolUse","Tool_Name":"Bash"}`, `payload: "Tool_Name" is not a key; did you mean "tool_name"?`},
		{`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_name":"Bash"}`, `payload: "tool_name" is given twice`},
		{`{"hook_event_name":"PreToolUse","cwd":["/w"]}`, `payload: "cwd" must be a string, not an array`},
	} {
		_, _, err := ReadPayload(strings.NewReader(tt.in))
		require.EqualError(t, err, tt.want, "%q", tt.in)
	}
	// Keys Payload does not name are ignored, as before: Claude Code adds
	// fields (stop_hook_active, a tool_response of any shape, ...).
	p, _, err = ReadPayload(strings.NewReader(`{"hook_event_name":"PreToolUse","session_id":"s","transcript_path":"/t","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t","cwd":"/w","new_field":{"x":[1]},"toolName":"Read"}`))
	require.NoError(t, err)
	require.Equal(t, Payload{SessionID: "s", TranscriptPath: "/t", Cwd: "/w", PermissionMode: "default", HookEventName: PreToolUse,
		ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "t"}, *p)
}

func TestWorkspace(t *testing.T) {
	ws := fixture(t)
	for _, tc := range []struct {
		name                      string
		flag, project, cwd        string
		wantWS, wantNote, wantErr string
	}{
		{name: "--workspace wins", flag: "/elsewhere", project: ws, cwd: ws + "/src", wantWS: "/elsewhere"},
		{name: "the project root before the cwd", project: ws, cwd: ws + "/src", wantWS: ws},
		{name: "the cwd when nothing else names one", cwd: ws + "/src", wantWS: ws + "/src"},
		{name: "a cwd inside .git is cut back", cwd: ws + "/.git/hooks", wantWS: ws, wantNote: "is inside .git, which is never a workspace"},
		{name: "a project root inside .git is cut back", project: ws + "/.git", cwd: ws, wantWS: ws, wantNote: "CLAUDE_PROJECT_DIR " + ws + "/.git is inside .git"},
		{name: "a cwd inside another protected name is refused", cwd: ws + "/.vscode", wantErr: "is inside .vscode, which is never a workspace"},
		{name: "a cwd inside .github/hooks is refused", cwd: ws + "/.github/hooks", wantErr: "is inside .github/hooks, which is never a workspace"},
		{name: "a cwd in .github is not", cwd: ws + "/.github", wantWS: ws + "/.github"},
		{name: "the project root names the project then", project: ws, cwd: ws + "/.vscode", wantWS: ws},
		{name: "a relative cwd is refused", cwd: "src", wantErr: `payload cwd "src" is not an absolute path`},
		{name: "nothing names a workspace", wantErr: "no workspace: pass --workspace DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, note, err := Workspace(tc.flag, tc.project, tc.cwd)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantWS, got)
			if tc.wantNote == "" {
				require.Empty(t, note)
			} else {
				require.Contains(t, note, tc.wantNote)
			}
		})
	}
}

func TestAnswer(t *testing.T) {
	ws := fixture(t)
	d := decider(t, ws)
	for _, tc := range []struct {
		name, cwd, tool string
		input           map[string]any
		note            string
		want, reason    string
	}{
		{name: "a read inside", cwd: ws, tool: "Read", input: map[string]any{"file_path": ws + "/src/main.go"},
			want: "allow", reason: "cordon " + permission.RuleReadAllow + ": "},
		{name: "a write inside asks", cwd: ws, tool: "Write", input: map[string]any{"file_path": ws + "/src/x.go", "content": "x"},
			want: "ask", reason: "cordon " + permission.RuleWriteApproval + ": "},
		{name: "a hook is protected", cwd: ws, tool: "Write", input: map[string]any{"file_path": ws + "/.git/hooks/pre-commit", "content": "x"},
			want: "deny", reason: "cordon " + permission.RuleProtectedPath + ": "},
		{name: "a relative path leaving the workspace", cwd: ws, tool: "Read", input: map[string]any{"file_path": "../outside"},
			want: "deny", reason: "cordon " + permission.RuleOutsideWorkspace + ": "},
		{name: "an unknown tool", cwd: ws, tool: "mcp__x__y", input: map[string]any{},
			want: "deny", reason: "cordon " + permission.RuleDefaultDeny + ": "},
		{name: "the workspace's note", cwd: ws + "/.git/hooks", tool: "Read", input: map[string]any{"file_path": ws + "/src/main.go"},
			note: "workspace W: from .git", want: "allow", reason: "[workspace W: from .git]"},
		{name: "a cwd outside is named", cwd: filepath.Dir(ws), tool: "Read", input: map[string]any{"file_path": ws + "/src/main.go"},
			want: "allow", reason: "[workspace " + ws + ": payload cwd " + filepath.Dir(ws) + " is outside it]"},
		{name: "a protected cwd is named", cwd: ws + "/.vscode", tool: "Read", input: map[string]any{"file_path": ws + "/src/main.go"},
			want: "allow", reason: "payload cwd " + ws + "/.vscode is inside .vscode]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := payload(t, tc.cwd, tc.tool, tc.input)
			req, dec, out, err := Answer(d, p, tc.note, nil)
			require.NoError(t, err)
			require.Equal(t, "toolu_1", req.ToolUseID)
			a := out.HookSpecificOutput
			require.Equal(t, PreToolUse, a.HookEventName)
			require.Equal(t, tc.want, a.PermissionDecision, a.PermissionDecisionReason)
			require.Equal(t, tc.want, strings.ToLower(string(dec.Action)))
			require.Contains(t, a.PermissionDecisionReason, tc.reason)
			require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon "+dec.RuleID+": "), a.PermissionDecisionReason)
			require.Nil(t, a.UpdatedInput)
		})
	}
}

func TestAnswerRewritesBash(t *testing.T) {
	ws := fixture(t)
	d := decider(t, ws)
	rw := &Rewrite{Exe: "/opt/cordon it's", RunArgs: []RunArg{{"--workspace", ws}, {"--allow-read", "/x y"}}}
	input := map[string]any{"command": `echo 'a' "$HOME" > x`, "description": "Write x", "timeout": 60000}
	_, _, out, err := Answer(d, payload(t, ws, "Bash", input), "", rw)
	require.NoError(t, err)
	a := out.HookSpecificOutput
	require.Equal(t, "ask", a.PermissionDecision, "the decision is kept")
	require.True(t, strings.HasSuffix(a.PermissionDecisionReason, "; rewritten to run inside cordon's sandbox"), a.PermissionDecisionReason)
	var got map[string]any
	require.NoError(t, json.Unmarshal(a.UpdatedInput, &got))
	require.Equal(t, "Write x", got["description"])
	require.EqualValues(t, 60000, got["timeout"])
	cmd := got["command"].(string)
	require.True(t, strings.HasPrefix(cmd, `'/opt/cordon it'\''s' run --no-tty --workspace '`+ws+`' --allow-read '/x y' -- /bin/`), cmd)
	require.True(t, strings.HasSuffix(cmd, ` -c 'echo '\''a'\'' "$HOME" > x'`), cmd)

	// Denied calls and other tools are never rewritten.
	for _, p := range []*Payload{
		payload(t, ws, "Bash", map[string]any{"command": "sudo id"}),
		payload(t, ws, "Read", map[string]any{"file_path": ws + "/src/main.go"}),
	} {
		_, _, out, err := Answer(d, p, "", rw)
		require.NoError(t, err)
		require.Nil(t, out.HookSpecificOutput.UpdatedInput)
	}

	// Malformed arguments are denied before any rewrite.
	p := payload(t, ws, "Bash", map[string]any{"command": 1})
	_, dec, out, err := Answer(d, p, "", rw)
	require.NoError(t, err)
	require.Equal(t, permission.RuleInvalidArguments, dec.RuleID)
	require.Equal(t, "deny", out.HookSpecificOutput.PermissionDecision)
	require.Nil(t, out.HookSpecificOutput.UpdatedInput)
}

// A rewrite refuses what it cannot rewrite rather than pass it on
// unconfined.
func TestRewriteRefusesMalformedInput(t *testing.T) {
	rw := &Rewrite{Exe: "/bin/cordon"}
	for in, want := range map[string]string{
		`[1]`:            "tool_input is not an object",
		`{"command": 1}`: "tool_input.command is not a string",
		`{"cmd": "ls"}`:  "tool_input.command is not a string",
	} {
		_, err := rw.input(json.RawMessage(in))
		require.ErrorContains(t, err, want, in)
	}
}

func TestEncodeKeepsShellCharacters(t *testing.T) {
	b, err := Encode(Output{HookSpecificOutput: Decision{HookEventName: PreToolUse, PermissionDecision: "ask",
		PermissionDecisionReason: "a > b && c < d", UpdatedInput: json.RawMessage(`{"command":"x > y"}`)}})
	require.NoError(t, err)
	require.Equal(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a > b && c < d","updatedInput":{"command":"x > y"}}}`, string(b))
}
