package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

type fixture struct {
	ws, outside, agents string
	d                   *Decider
}

// newFixture: ws/{src/main.go, escape -> outside}, outside/secret, and an
// agents root base/agents/{me,parent,other} with ws as agent "me".
func newFixture(t testing.TB) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := fixture{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), agents: filepath.Join(base, "agents")}
	for _, dir := range []string{f.ws + "/src", f.outside, f.agents + "/me", f.agents + "/parent", f.agents + "/other"} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	require.NoError(t, os.WriteFile(f.ws+"/src/main.go", []byte("package main\n"), 0o644))
	require.NoError(t, os.WriteFile(f.outside+"/secret", []byte("s"), 0o600))
	require.NoError(t, os.Symlink(f.outside, f.ws+"/escape"))
	f.d, err = New(Config{Workspace: f.ws})
	require.NoError(t, err)
	return f
}

func req(name string, args any) Request {
	raw, ok := args.(string)
	if !ok {
		b, _ := json.Marshal(args)
		raw = string(b)
	}
	return Request{ToolUseID: "toolu_1", Name: name, Arguments: json.RawMessage(raw)}
}

func TestDecide(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		req    Request
		action Action
		rule   string
	}{
		{"sudo", req("bash", map[string]string{"command": "sudo apt install x"}), Deny, RuleHardDeny},
		{"rm -rf root", req("bash", map[string]string{"command": "rm -rf / --no-preserve-root"}), Deny, RuleHardDeny},
		{"rm -fr", req("bash", map[string]string{"command": "rm -fr ./build"}), Deny, RuleHardDeny},
		{"mkfs", req("bash", map[string]string{"command": "mkfs.ext4 /dev/sda1"}), Deny, RuleHardDeny},
		{"dd", req("bash", map[string]string{"command": "dd if=/dev/zero of=/dev/sda"}), Deny, RuleHardDeny},
		{"unparsable", req("bash", map[string]string{"command": "echo 'oops"}), Deny, RuleHardDeny},
		{"sh -c dynamic argument", req("bash", map[string]string{"command": `sh -c "sudo id $HOME"`}), Deny, RuleHardDeny},
		{"eval dynamic argument", req("bash", map[string]string{"command": `eval "sudo id $HOME"`}), Deny, RuleHardDeny},
		{"heredoc dynamic", req("bash", map[string]string{"command": "bash <<EOF\nsudo id $HOME\nEOF"}), Deny, RuleHardDeny},
		{"printf piped", req("bash", map[string]string{"command": `printf '%s\n' 'sudo id' | sh`}), Deny, RuleHardDeny},
		{"source stdin", req("bash", map[string]string{"command": "source /dev/stdin <<< 'sudo id'"}), Deny, RuleHardDeny},
		{"dot process substitution", req("bash", map[string]string{"command": ". <(echo sudo id)"}), Deny, RuleHardDeny},
		{"trap", req("bash", map[string]string{"command": "trap 'sudo id' EXIT"}), Deny, RuleHardDeny},
		{"env -a", req("bash", map[string]string{"command": "env -a x sudo id"}), Deny, RuleHardDeny},
		{"chroot", req("bash", map[string]string{"command": "chroot /mnt sudo id"}), Deny, RuleHardDeny},
		{"flock -c", req("bash", map[string]string{"command": "flock /tmp/l -c 'sudo id'"}), Deny, RuleHardDeny},
		{"script -c", req("bash", map[string]string{"command": "script -c 'sudo id' /dev/null"}), Deny, RuleHardDeny},
		{"systemd-run", req("bash", map[string]string{"command": "systemd-run --uid=0 id"}), Deny, RuleHardDeny},
		{"watch", req("bash", map[string]string{"command": "watch sudo id"}), Deny, RuleHardDeny},
		{"systemctl isolate", req("bash", map[string]string{"command": "systemctl isolate poweroff.target"}), Deny, RuleHardDeny},
		{"loginctl reboot", req("bash", map[string]string{"command": "loginctl reboot"}), Deny, RuleHardDeny},
		{"sysrq", req("bash", map[string]string{"command": "echo b > /proc/sysrq-trigger"}), Deny, RuleHardDeny},
		{"dd proc root", req("bash", map[string]string{"command": "dd if=x of=/proc/self/root/dev/sda"}), Deny, RuleHardDeny},
		{"cp onto disk", req("bash", map[string]string{"command": "cp img /dev/sda"}), Deny, RuleHardDeny},
		{"mkswap", req("bash", map[string]string{"command": "mkswap /dev/sda2"}), Deny, RuleHardDeny},
		{"rm interactive never", req("bash", map[string]string{"command": "rm -r --interactive=never /"}), Deny, RuleHardDeny},
		{"echo sudo", req("bash", map[string]string{"command": "echo sudo"}), Ask, RuleBashApproval},
		{"grep sudo", req("bash", map[string]string{"command": "grep sudo notes.txt"}), Ask, RuleBashApproval},
		{"sh -c dynamic command", req("bash", map[string]string{"command": `sh -c "$CMD id"`}), Ask, RuleBashApproval},
		{"ls", req("bash", map[string]string{"command": "ls -la"}), Ask, RuleBashApproval},
		{"git diff", req("bash", map[string]string{"command": "git diff --stat"}), Ask, RuleBashApproval},
		{"cat passwd", req("bash", map[string]string{"command": "cat /etc/passwd"}), Ask, RuleBashApproval},
		{"python", req("bash", map[string]string{"command": "python3 script.py"}), Ask, RuleBashApproval},
		{"rm file", req("bash", map[string]string{"command": "rm old.log"}), Ask, RuleBashApproval},
		{"redirect", req("bash", map[string]string{"command": "ls > files.txt"}), Ask, RuleBashApproval},
		{"Bash name", req("Bash", map[string]string{"command": "ls", "description": "list"}), Ask, RuleBashApproval},
		{"unknown tool", req("launch_missiles", map[string]string{}), Deny, RuleDefaultDeny},
		{"mcp tool", req("mcp__github__create_issue", map[string]string{"title": "x"}), Deny, RuleDefaultDeny},
		{"read inside", req("read_file", map[string]string{"path": "src/main.go"}), Allow, RuleReadAllow},
		{"read absolute inside", req("read_file", map[string]string{"path": f.ws + "/src/main.go"}), Allow, RuleReadAllow},
		{"Read", req("Read", map[string]string{"file_path": f.ws + "/src/main.go"}), Allow, RuleReadAllow},
		{"read dotdot", req("read_file", map[string]string{"path": "../outside/secret"}), Deny, RuleOutsideWorkspace},
		{"read absolute outside", req("read_file", map[string]string{"path": "/etc/passwd"}), Deny, RuleOutsideWorkspace},
		{"read symlink escape", req("read_file", map[string]string{"path": "escape/secret"}), Deny, RuleOutsideWorkspace},
		{"write inside asks", req("write_file", map[string]string{"path": "src/new.go", "content": "x"}), Ask, RuleWriteApproval},
		{"edit inside asks", req("edit_file", map[string]string{"path": "src/main.go"}), Ask, RuleWriteApproval},
		{"Write", req("Write", map[string]string{"file_path": f.ws + "/a.txt", "content": ""}), Ask, RuleWriteApproval},
		{"MultiEdit", req("MultiEdit", map[string]any{"file_path": "src/main.go", "edits": []any{}}), Ask, RuleWriteApproval},
		{"NotebookEdit", req("NotebookEdit", map[string]any{"notebook_path": "n.ipynb", "new_source": ""}), Ask, RuleWriteApproval},
		{"write dotdot", req("write_file", map[string]string{"path": "../outside/x", "content": ""}), Deny, RuleOutsideWorkspace},
		{"write symlink escape", req("write_file", map[string]string{"path": "escape/x", "content": ""}), Deny, RuleOutsideWorkspace},
		{"Edit absolute outside", req("Edit", map[string]string{"file_path": "/etc/hosts"}), Deny, RuleOutsideWorkspace},
		{"write git hook", req("write_file", map[string]string{"path": ".git/hooks/pre-commit", "content": "x"}), Deny, RuleProtectedPath},
		{"Write .vscode", req("Write", map[string]string{"file_path": f.ws + "/.vscode/tasks.json", "content": "x"}), Deny, RuleProtectedPath},
		{"glob inside", req("glob", map[string]string{"pattern": "src/**/*.go"}), Allow, RuleReadAllow},
		{"glob prefix outside", req("glob", map[string]string{"pattern": "../outside/*"}), Deny, RuleOutsideWorkspace},
		{"glob through symlink", req("glob", map[string]string{"pattern": "escape/*"}), Deny, RuleOutsideWorkspace},
		{"glob climbs after wildcard", req("glob", map[string]string{"pattern": "src/*/../../../*"}), Deny, RuleOutsideWorkspace},
		{"Glob with path", req("Glob", map[string]string{"pattern": "*.go", "path": f.ws + "/src"}), Allow, RuleReadAllow},
		{"Glob path outside", req("Glob", map[string]string{"pattern": "*", "path": "/etc"}), Deny, RuleOutsideWorkspace},
		{"Grep default path", req("Grep", map[string]string{"pattern": "func main"}), Allow, RuleReadAllow},
		{"Grep outside", req("Grep", map[string]string{"pattern": "x", "path": "/"}), Deny, RuleOutsideWorkspace},
		{"LS", req("LS", map[string]string{"path": f.ws}), Allow, RuleReadAllow},
		{"args not object", req("bash", `"ls"`), Deny, RuleInvalidArguments},
		{"args missing", Request{Name: "bash"}, Deny, RuleInvalidArguments},
		{"args null", req("read_file", `null`), Deny, RuleInvalidArguments},
		{"empty command", req("bash", map[string]string{"command": ""}), Deny, RuleInvalidArguments},
		{"command not string", req("bash", `{"command":["sudo"]}`), Deny, RuleInvalidArguments},
		{"path not string", req("read_file", `{"path":7}`), Deny, RuleInvalidArguments},
		{"path missing", req("read_file", `{}`), Deny, RuleInvalidArguments},
		{"NUL in path", req("read_file", map[string]string{"path": "a\x00b"}), Deny, RuleOutsideWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.d.Decide(tt.req)
			if diff := cmp.Diff([]string{string(tt.action), tt.rule}, []string{string(got.Action), got.RuleID}); diff != "" {
				t.Fatalf("decision mismatch (-want +got):\n%s\nreason: %s", diff, got.Reason)
			}
			require.Equal(t, tt.req.ToolUseID, got.ToolUseID)
			require.NotEmpty(t, got.Reason)
		})
	}
}

func TestDecideReasonsNameTheSubject(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		req  Request
		want string
	}{
		{req("bash", map[string]string{"command": "sudo apt install x"}), "sudo"},
		{req("read_file", map[string]string{"path": "escape/secret"}), f.outside + "/secret"},
		{req("write_file", map[string]string{"path": "src/new.go"}), "src/new.go"},
		{req("frobnicate", map[string]string{}), `"frobnicate"`},
		{req("bash", map[string]string{"command": "make test"}), "make test"},
	} {
		got := f.d.Decide(tt.req)
		require.Contains(t, got.Reason, tt.want)
	}
}

func TestCrossAgentRules(t *testing.T) {
	f := newFixture(t)
	d, err := New(Config{Workspace: f.agents + "/me", AgentsRoot: f.agents, Agent: "me", Parent: "parent"})
	require.NoError(t, err)
	tests := []struct {
		name   string
		req    Request
		action Action
		rule   string
	}{
		{"own read", req("read_file", map[string]string{"path": "notes"}), Allow, RuleReadAllow},
		{"sibling read", req("read_file", map[string]string{"path": "../other/notes"}), Deny, RuleCrossAgent},
		{"parent read outside ws", req("read_file", map[string]string{"path": "../parent/notes"}), Deny, RuleOutsideWorkspace},
		{"parent write", req("write_file", map[string]string{"path": "../parent/notes"}), Deny, RuleCrossAgent},
		{"glob at ancestor", req("glob", map[string]string{"pattern": "../../**"}), Deny, RuleCrossAgent},
		{"Grep at root", req("Grep", map[string]string{"pattern": "key", "path": "/"}), Deny, RuleCrossAgent},
		{"bash sibling", req("bash", map[string]string{"command": "cat " + f.agents + "/other/key"}), Deny, RuleCrossAgent},
		{"bash find ancestor", req("bash", map[string]string{"command": "find " + filepath.Dir(f.agents) + " -name key"}), Deny, RuleCrossAgent},
		{"bash glob sibling", req("bash", map[string]string{"command": "cat ../*/key"}), Deny, RuleCrossAgent},
		{"bash own", req("bash", map[string]string{"command": "cat ./notes"}), Ask, RuleBashApproval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Decide(tt.req)
			require.Equal(t, []string{string(tt.action), tt.rule}, []string{string(got.Action), got.RuleID}, got.Reason)
		})
	}
}

func TestNewErrors(t *testing.T) {
	f := newFixture(t)
	for _, cfg := range []Config{
		{},
		{Workspace: f.ws + "/src/main.go"},
		{Workspace: f.ws, Agent: "me"},
		{Workspace: f.ws, AgentsRoot: f.agents},
	} {
		_, err := New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestDecodeRequest(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"tool_use_id":"t","name":"bash","arguments":{"command":"ls"}}`))
	require.NoError(t, err)
	require.Equal(t, `{"command":"ls"}`, string(r.Arguments))
	// Keys match only in their exact spelling and once (encoding/json
	// took "NAME" for name and let the last of two win), and each error
	// says what is wrong in plain words, not in Go's.
	for _, tt := range []struct{ in, want string }{
		{``, `decode request: empty input: a JSON object is expected`},
		{`[]`, `decode request: a JSON object is expected, not an array`},
		{`{"name":""}`, `decode request: missing tool name ("name")`},
		{`{"name":"bash","extra":1}`, `decode request: "extra" is not a key; the keys are tool_use_id, name and arguments`},
		{`{"name":"bash"} {}`, `decode request: trailing data after the JSON object`},
		{`{"name":7}`, `decode request: "name" must be a string, not a number`},
		{`{"TOOL_USE_ID":"t","NAME":"bash"}`, `decode request: "TOOL_USE_ID" is not a key; did you mean "tool_use_id"?`},
		{`{"tool_use_id":"t","Name":"bash"}`, `decode request: "Name" is not a key; did you mean "name"?`},
		{`{"name":"read_file","name":"bash"}`, `decode request: "name" is given twice`},
		{`{"name":"bash","arguments":{},"arguments":{"command":"rm -rf /"}}`, `decode request: "arguments" is given twice`},
		{`{"name":"bash","toolUseId":"t"}`, `decode request: "toolUseId" is not a key; did you mean "tool_use_id"?`},
	} {
		_, err := DecodeRequest([]byte(tt.in))
		require.EqualError(t, err, tt.want, tt.in)
	}
}

func TestDecisionJSON(t *testing.T) {
	b, err := json.Marshal(Decision{ToolUseID: "t", Action: Ask, RuleID: RuleBashApproval, Reason: "r"})
	require.NoError(t, err)
	require.JSONEq(t, `{"tool_use_id":"t","action":"ASK","rule_id":"bash.requires_approval","reason":"r"}`, string(b))
	require.Equal(t, []string{RuleCrossAgent, RuleInvalidArguments, RuleOutsideWorkspace, RuleProtectedPath, RulePolicyDenied,
		RuleHardDeny, RuleReadAllow, RuleWriteApproval, RuleBashSandboxed, RuleBashApproval, RuleDefaultDeny}, Rules())
}

// Files that tools run later outside the sandbox are refused to the file
// tools too, as the kernel policy of `cordon run --workspace` refuses them
// to a shell: the handlers of write_file and edit_file run unconfined.
func TestProtectedWritesAreDenied(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".vscode/settings.json", ".envrc", ".mcp.json", ".claude/settings.json"} {
		t.Run(p, func(t *testing.T) {
			d := f.d.Decide(req("write_file", map[string]string{"path": p, "content": "x"}))
			require.Equal(t, Deny, d.Action, d.Reason)
			require.Equal(t, RuleProtectedPath, d.RuleID)
			require.Contains(t, d.Reason, "protected")
			require.Contains(t, d.Reason, p)
		})
	}
	d := f.d.Decide(req("read_file", map[string]string{"path": ".vscode/settings.json"}))
	require.Equal(t, Allow, d.Action, "reading them stays allowed")
	d = f.d.Decide(req("write_file", map[string]string{"path": "src/.vscode-notes", "content": "x"}))
	require.Equal(t, Ask, d.Action, d.Reason)
}

// cordon's state directory inside the workspace (HOME as the workspace
// holds ~/.local/state/cordon) is denied to the file tools as it is to
// the sandbox: its audit key would let the agent forge the audit log.
func TestStateDirectoryInWorkspaceIsDenied(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sd := filepath.Join(ws, ".local", "state", "cordon")
	require.NoError(t, os.MkdirAll(filepath.Join(sd, "audit"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(sd, "audit", "key"), []byte("k"), 0o600))
	t.Setenv("CORDON_STATE_DIR", sd)
	d, err := New(Config{Workspace: ws})
	require.NoError(t, err)
	for _, r := range []Request{
		req("Read", map[string]string{"file_path": filepath.Join(sd, "audit", "key")}),
		req("Write", map[string]string{"file_path": filepath.Join(sd, "detect-native.json"), "content": "{}"}),
		req("Grep", map[string]string{"pattern": "x", "path": sd}),
	} {
		got := d.Decide(r)
		require.Equal(t, Deny, got.Action, "%s: %s", r.Name, got.Reason)
	}
	require.Equal(t, Allow, d.Decide(req("Read", map[string]string{"file_path": filepath.Join(ws, "a.txt")})).Action)
	// A policy naming it writable is refused, as the launcher refuses it.
	_, err = New(Config{Workspace: ws, Policy: &policy.FsSandboxPolicy{WritableRoots: []string{ws, sd}}})
	require.Error(t, err)
}
