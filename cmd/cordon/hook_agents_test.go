package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// agentFixture is an agent started in ~: the workspace is HOME, with a
// key in .ssh and a git repository; outside is a directory beside HOME.
func agentFixture(t *testing.T) (home, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(base, "state"))
	home, outside = filepath.Join(base, "home"), filepath.Join(base, "outside")
	for _, d := range []string{home + "/.ssh", home + "/.git/hooks", home + "/src", outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(home+"/.ssh/id_ed25519", []byte("KEY"), 0o600))
	require.NoError(t, os.WriteFile(home+"/src/main.go", []byte("package main\n"), 0o644))
	t.Setenv("HOME", home)
	for _, v := range []string{"CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "COPILOT_PROJECT_DIR"} {
		t.Setenv(v, "")
	}
	return home, outside
}

// The payloads below have the shape each agent's code produces (field
// names from its source or published schema, docs/agents.md).

func codexPayload(cwd, tool string, input any) string {
	b, _ := json.Marshal(map[string]any{"session_id": "019a-s", "turn_id": "1", "transcript_path": nil, "cwd": cwd,
		"hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
		"tool_name": tool, "tool_input": input, "tool_use_id": "call_1"})
	return string(b)
}

func geminiPayload(cwd, tool string, input any) string {
	b, _ := json.Marshal(map[string]any{"session_id": "s1", "transcript_path": "", "cwd": cwd,
		"hook_event_name": "BeforeTool", "timestamp": "2026-12-02T04:00:00.000Z", "tool_name": tool, "tool_input": input})
	return string(b)
}

// copilotPayload is the camelCase format as Copilot CLI 1.0.102 sends it
// (seen: toolArgs an object; older versions sent a JSON string, which
// the parser's own test covers).
func copilotPayload(cwd, tool string, input any) string {
	b, _ := json.Marshal(map[string]any{"sessionId": "5e9286e7-350f-44ef-8ef9-78bae317dc50", "timestamp": 1796186863181, "cwd": cwd, "toolName": tool, "toolArgs": input})
	return string(b)
}

func cursorPayload(event string, fields map[string]any) string {
	m := map[string]any{"conversation_id": "c1", "generation_id": "g1", "hook_event_name": event,
		"workspace_roots": []string{os.Getenv("HOME")}, "cursor_version": "2.0.77"}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// agentAnswer reads an agent's answer as (decision, reason, rewritten
// command): each agent's format mapped onto allow, ask, deny, and "" for
// an empty answer.
func agentAnswer(t *testing.T, agent, out string) (decision, reason, command string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		return "", "", ""
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	str := func(v any) string { s, _ := v.(string); return s }
	cmd := func(v any) string {
		in, _ := v.(map[string]any)
		return str(in["command"])
	}
	switch agent {
	case "codex":
		if h, ok := m["hookSpecificOutput"].(map[string]any); ok {
			return str(h["permissionDecision"]), str(h["permissionDecisionReason"]), cmd(h["updatedInput"])
		}
		return "ask", str(m["systemMessage"]), "" // Codex's own approval policy decides
	case "gemini":
		h, _ := m["hookSpecificOutput"].(map[string]any)
		return str(m["decision"]), str(m["reason"]), cmd(h["tool_input"])
	case "copilot":
		return str(m["permissionDecision"]), str(m["permissionDecisionReason"]), cmd(m["modifiedArgs"])
	case "cursor":
		return str(m["permission"]), str(m["agent_message"]), ""
	}
	t.Fatalf("no agent %s", agent)
	return
}

type agentCase struct {
	name, agent, payload string
	args                 []string
	decision, rule       string // rule "" when the answer carries no reason
}

func TestHookAgentDecisions(t *testing.T) {
	home, outside := agentFixture(t)
	key := home + "/.ssh/id_ed25519"
	patch := func(header string) map[string]string {
		return map[string]string{"command": "*** Begin Patch\n" + header + "\n+x\n*** End Patch\n"}
	}
	cases := []agentCase{
		// Codex: reads go through the shell; apply_patch names files.
		{"codex patch adds a key", "codex", codexPayload(home, "apply_patch", patch("*** Add File: .ssh/authorized_keys")), nil, "deny", "policy.denied"},
		{"codex patch to ~/.ssh (not expanded)", "codex", codexPayload(home, "apply_patch", patch("*** Update File: ~/.ssh/id_ed25519")), nil, "deny", "path.outside_workspace"},
		{"codex patch path with a leading space", "codex", codexPayload(home, "apply_patch", patch("*** Update File:  .ssh/id_ed25519")), nil, "deny", "request.invalid_arguments"},
		{"codex patch to .git/hooks", "codex", codexPayload(home, "apply_patch", patch("*** Add File: .git/hooks/pre-commit")), nil, "deny", "guard.protected_path"},
		{"codex patch moved outside", "codex", codexPayload(home, "apply_patch", patch("*** Update File: src/main.go\n*** Move to: "+outside+"/main.go")), nil, "deny", "path.outside_workspace"},
		{"codex patch inside", "codex", codexPayload(home, "apply_patch", patch("*** Update File: src/main.go")), nil, "ask", "path.write_requires_approval"},
		{"codex freeform patch", "codex", codexPayload(home, "apply_patch", "*** Begin Patch\n*** Add File: .git/config\n+x\n*** End Patch"), nil, "deny", "guard.protected_path"},
		{"codex shell writing outside", "codex", codexPayload(home, "Bash", map[string]string{"command": "echo x > " + outside + "/f"}), nil, "ask", "bash.requires_approval"},
		{"codex sudo", "codex", codexPayload(home, "Bash", map[string]string{"command": "sudo id"}), nil, "deny", "bash.hard_deny"},
		{"codex MCP tool", "codex", codexPayload(home, "mcp__fs__read", map[string]string{"path": key}), nil, "deny", "default.deny"},
		// Gemini: no trimming, no ~, relative to the project dir.
		{"gemini read of the key", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": key}), nil, "deny", "policy.denied"},
		{"gemini relative read of the key", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": ".ssh/id_ed25519"}), nil, "deny", "policy.denied"},
		{"gemini ~ read (not expanded)", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": "~/.ssh/id_ed25519"}), nil, "deny", "path.outside_workspace"},
		{"gemini spaced read", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": " ~/.ssh/id_ed25519"}), nil, "deny", "request.invalid_arguments"},
		{"gemini @ read", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": "@.ssh/id_ed25519"}), nil, "deny", "request.invalid_arguments"},
		{"gemini %-escaped read", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": "src/%2e%2e/.ssh/id_ed25519"}), nil, "deny", "request.invalid_arguments"},
		{"gemini list of .ssh", "gemini", geminiPayload(home, "list_directory", map[string]string{"dir_path": ".ssh"}), nil, "deny", "policy.denied"},
		{"gemini read_many_files", "gemini", geminiPayload(home, "read_many_files", map[string]any{"include": []string{"src/*.go", ".ssh/*"}}), nil, "deny", "policy.denied"},
		// Gemini globs with nocase (issue 38.6): ".SSH/*" lists ~/.ssh.
		{"gemini glob of .ssh", "gemini", geminiPayload(home, "glob", map[string]string{"pattern": ".ssh/*"}), nil, "deny", "policy.denied"},
		{"gemini glob of .SSH (nocase)", "gemini", geminiPayload(home, "glob", map[string]string{"pattern": ".SSH/*"}), nil, "deny", "policy.denied"},
		{"gemini glob of .Ssh/id_* (nocase)", "gemini", geminiPayload(home, "glob", map[string]string{"pattern": ".Ssh/id_*"}), nil, "deny", "policy.denied"},
		{"gemini read_many_files of .SSH (nocase)", "gemini", geminiPayload(home, "read_many_files", map[string]any{"include": []string{".SSH/*"}}), nil, "deny", "policy.denied"},
		{"gemini glob of .SSH, case_sensitive", "gemini", geminiPayload(home, "glob", map[string]any{"pattern": ".SSH/*", "case_sensitive": true}), nil, "allow", "path.read_allow"},
		{"gemini glob of SRC (nocase, inside)", "gemini", geminiPayload(home, "glob", map[string]string{"pattern": "SRC/*.go"}), nil, "allow", "path.read_allow"},
		{"gemini glob of src", "gemini", geminiPayload(home, "glob", map[string]string{"pattern": "src/**/*.go"}), nil, "allow", "path.read_allow"},
		{"gemini write to .git/hooks", "gemini", geminiPayload(home, "write_file", map[string]string{"file_path": ".git/hooks/pre-commit", "content": "x"}), nil, "deny", "guard.protected_path"},
		{"gemini read inside", "gemini", geminiPayload(home, "read_file", map[string]string{"file_path": "src/main.go"}), nil, "allow", "path.read_allow"},
		{"gemini shell writing outside", "gemini", geminiPayload(home, "run_shell_command", map[string]string{"command": "echo x > " + outside + "/f"}), nil, "ask", "bash.requires_approval"},
		// Copilot: absolute paths only.
		{"copilot view of the key", "copilot", copilotPayload(home, "view", map[string]string{"path": key}), nil, "deny", "policy.denied"},
		{"copilot view ~/.ssh", "copilot", copilotPayload(home, "view", map[string]string{"path": "~/.ssh/id_ed25519"}), nil, "deny", "request.invalid_arguments"},
		{"copilot view spaced", "copilot", copilotPayload(home, "view", map[string]string{"path": " " + key}), nil, "deny", "request.invalid_arguments"},
		{"copilot view relative", "copilot", copilotPayload(home, "view", map[string]string{"path": ".ssh/id_ed25519"}), nil, "deny", "request.invalid_arguments"},
		{"copilot grep over paths, one denied", "copilot", copilotPayload(home, "grep", map[string]any{"pattern": "KEY", "paths": []string{home + "/src", home + "/.ssh"}}), nil, "deny", "policy.denied"},
		{"copilot create in .git/hooks", "copilot", copilotPayload(home, "create", map[string]string{"path": home + "/.git/hooks/pre-commit", "file_text": "x"}), nil, "deny", "guard.protected_path"},
		{"copilot view inside", "copilot", copilotPayload(home, "view", map[string]string{"path": home + "/src/main.go"}), nil, "allow", "path.read_allow"},
		{"copilot shell writing outside", "copilot", copilotPayload(home, "bash", map[string]string{"command": "echo x > " + outside + "/f", "description": "d"}), nil, "ask", "bash.requires_approval"},
		{"copilot snake_case format", "copilot", `{"hook_event_name":"PreToolUse","session_id":"s","timestamp":"2026-12-02T04:00:00Z","cwd":"` + home + `","tool_name":"view","tool_input":{"path":"` + key + `"}}`, nil, "deny", "policy.denied"},
		// Cursor: beforeReadFile and beforeShellExecution.
		{"cursor read of the key", "cursor", cursorPayload("beforeReadFile", map[string]any{"file_path": key, "content": "KEY"}), nil, "deny", ""},
		{"cursor read ~/.ssh", "cursor", cursorPayload("beforeReadFile", map[string]any{"file_path": "~/.ssh/id_ed25519"}), nil, "deny", ""},
		{"cursor read inside", "cursor", cursorPayload("beforeReadFile", map[string]any{"file_path": home + "/src/main.go"}), nil, "allow", ""},
		{"cursor shell writing outside", "cursor", cursorPayload("beforeShellExecution", map[string]any{"command": "echo x > " + outside + "/f", "cwd": home}), nil, "ask", "bash.requires_approval"},
		{"cursor sudo", "cursor", cursorPayload("beforeShellExecution", map[string]any{"command": "sudo id", "cwd": home}), nil, "deny", "bash.hard_deny"},
		{"cursor MCP", "cursor", cursorPayload("beforeMCPExecution", map[string]any{"tool_name": "db", "tool_input": "{}"}), nil, "deny", "default.deny"},
		// --allow-sandboxed: allowed when sandboxed, hard-deny and paths stay DENY.
		{"codex sandboxed build", "codex", codexPayload(home, "Bash", map[string]string{"command": "make test"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "allow", "bash.sandboxed"},
		{"codex sandboxed sudo", "codex", codexPayload(home, "Bash", map[string]string{"command": "sudo make"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "deny", "bash.hard_deny"},
		{"codex sandboxed patch to .git/hooks", "codex", codexPayload(home, "apply_patch", patch("*** Add File: .git/hooks/x")), []string{"--sandbox-bash", "--allow-sandboxed"}, "deny", "guard.protected_path"},
		{"gemini sandboxed build", "gemini", geminiPayload(home, "run_shell_command", map[string]string{"command": "make test"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "allow", "bash.sandboxed"},
		{"gemini sandboxed rm -rf", "gemini", geminiPayload(home, "run_shell_command", map[string]string{"command": "rm -rf /"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "deny", "bash.hard_deny"},
		{"copilot sandboxed build", "copilot", copilotPayload(home, "bash", map[string]string{"command": "make test"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "allow", "bash.sandboxed"},
		{"copilot sandboxed write to .git/hooks", "copilot", copilotPayload(home, "create", map[string]string{"path": home + "/.git/hooks/x", "file_text": "x"}), []string{"--sandbox-bash", "--allow-sandboxed"}, "deny", "guard.protected_path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.payload, append([]string{"hook", c.agent, "--no-audit"}, c.args...)...)
			require.Equal(t, 0, code, stderr)
			decision, reason, _ := agentAnswer(t, c.agent, stdout)
			require.Equal(t, c.decision, decision, stdout)
			if c.rule != "" {
				require.True(t, strings.HasPrefix(reason, "cordon "+c.rule+": "), reason)
			}
		})
	}
	// Nothing was written by deciding.
	_, err := os.Stat(outside + "/f")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// --sandbox-bash: the shell call comes back wrapped in 'cordon run' with
// the original command as one quoted word, in each agent's field.
func TestHookAgentRewrite(t *testing.T) {
	home, outside := agentFixture(t)
	command := "echo x > " + outside + "/f"
	for agent, p := range map[string]string{
		"codex":   codexPayload(home, "Bash", map[string]string{"command": command}),
		"gemini":  geminiPayload(home, "run_shell_command", map[string]string{"command": command, "dir_path": "src"}),
		"copilot": copilotPayload(home, "bash", map[string]string{"command": command, "description": "d"}),
	} {
		t.Run(agent, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, p, "hook", agent, "--no-audit", "--sandbox-bash")
			require.Equal(t, 0, code, stderr)
			decision, _, wrapped := agentAnswer(t, agent, stdout)
			want := map[string]string{"codex": "allow", "gemini": "ask", "copilot": "ask"}[agent] // Codex rewrites only with allow
			require.Equal(t, want, decision, stdout)
			require.Contains(t, wrapped, " run --no-tty --workspace '"+home+"' -- ")
			require.True(t, strings.HasSuffix(wrapped, " -c 'echo x > "+outside+"/f'"), wrapped)
		})
	}
	code, _, stderr := runCLI(t, cursorPayload("beforeShellExecution", map[string]any{"command": "ls", "cwd": home}), "hook", "cursor", "--no-audit", "--sandbox-bash")
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, stderr, "cannot rewrite a shell command")
	code, _, stderr = runCLI(t, codexPayload(home, "Bash", map[string]string{"command": "ls"}), "hook", "codex", "--no-audit", "--allow-sandboxed")
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, stderr, "--allow-sandboxed needs --sandbox-bash")
}

// What the agent cannot read as an answer must block: every agent takes
// exit 2 as a block (Codex and Gemini let a call through on a crash,
// another status or a timeout).
func TestHookAgentFailsClosed(t *testing.T) {
	home, _ := agentFixture(t)
	big := `{"hook_event_name":"BeforeTool","cwd":"` + home + `","tool_name":"read_file","tool_input":{"file_path":"x","pad":"` + strings.Repeat("a", 16<<20) + `"}}`
	for _, agent := range []string{"codex", "gemini", "copilot", "cursor"} {
		for name, in := range map[string]string{
			"garbage":   "not json",
			"empty":     "",
			"array":     "[]",
			"oversized": big,
			"no event":  `{"cwd":"` + home + `","tool_name":"x"}`,
		} {
			t.Run(agent+"/"+name, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, in, "hook", agent, "--no-audit")
				require.Equal(t, exitHookBlock, code, stdout)
				require.Empty(t, stdout)
				require.NotEmpty(t, stderr)
			})
		}
	}
}

// A call the hook cannot decide within its bound exits 2: the audit
// log's lock is held, as a sandboxed process could once hold it.
func TestHookAgentBlocksWhenItCannotDecideInTime(t *testing.T) {
	home, _ := agentFixture(t)
	sd := os.Getenv(state.EnvDir)
	payloads := map[string]string{
		"codex":   codexPayload(home, "Bash", map[string]string{"command": "ls"}),
		"gemini":  geminiPayload(home, "read_file", map[string]string{"file_path": "src/main.go"}),
		"copilot": copilotPayload(home, "view", map[string]string{"path": home + "/src/main.go"}),
		"cursor":  cursorPayload("beforeReadFile", map[string]any{"file_path": home + "/src/main.go"}),
	}
	// Under the default bound: a 200 ms one would, on a loaded machine,
	// end the whole test binary here (exitProcess is still os.Exit).
	code, _, stderr := runCLI(t, payloads["gemini"], "hook", "gemini")
	require.Equal(t, 0, code, stderr)
	t.Setenv("CORDON_HOOK_TIMEOUT", "200ms")
	locks, err := filepath.Glob(filepath.Join(sd, "audit", "locks", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, locks)
	var held []*os.File
	// Each hook call's goroutine goes on once the locks are let go, and
	// writes its records: the cleanup waits for all of them, before the
	// temporary directories are removed beneath them.
	var calls []chan string
	for _, l := range locks {
		f, err := os.OpenFile(l, os.O_RDWR, 0)
		require.NoError(t, err)
		require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
		held = append(held, f)
	}
	t.Cleanup(func() {
		for _, f := range held {
			f.Close()
		}
		for _, done := range calls {
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("a hook call did not end after its lock was let go")
			}
		}
		exitProcess = os.Exit
	})
	for agent, p := range payloads {
		exited := make(chan int, 1)
		// The process would end here; the test's stand-in records the
		// status and lets the blocked append fail instead of waiting.
		unblock := make(chan struct{})
		exitProcess = func(code int) { exited <- code; close(unblock) }
		done := make(chan string, 1)
		calls = append(calls, done)
		go func() { _, _, stderr := runCLI(t, p, "hook", agent); done <- stderr }()
		<-unblock
		require.Equal(t, exitHookBlock, <-exited, agent)
	}
}

// Claude Code headless turns an ask into a denial: --allow-sandboxed
// answers allow for a sandboxed Bash call, and deny stays deny.
func TestHookClaudeCodeAllowSandboxed(t *testing.T) {
	home, outside := agentFixture(t)
	for _, c := range []struct{ command, decision, rule string }{
		{"make test", "allow", "bash.sandboxed"},
		{"echo x > " + outside + "/f", "allow", "bash.sandboxed"}, // the kernel refuses the write
		{"sudo make install", "deny", "bash.hard_deny"},
	} {
		code, stdout, stderr := runCLI(t, payload(home, "Bash", map[string]string{"command": c.command}), "hook", "claude-code", "--no-audit", "--sandbox-bash", "--allow-sandboxed")
		require.Equal(t, 0, code, stderr)
		a := decodeAnswer(t, stdout)
		require.Equal(t, c.decision, a.HookSpecificOutput.PermissionDecision, stdout)
		require.True(t, strings.HasPrefix(a.HookSpecificOutput.PermissionDecisionReason, "cordon "+c.rule+": "), stdout)
		require.Equal(t, c.decision == "allow", a.HookSpecificOutput.UpdatedInput != nil, stdout)
	}
	code, stdout, stderr := runCLI(t, payload(home, "Write", map[string]string{"file_path": home + "/.git/hooks/pre-commit", "content": "x"}), "hook", "claude-code", "--no-audit", "--sandbox-bash", "--allow-sandboxed")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "deny", decodeAnswer(t, stdout).HookSpecificOutput.PermissionDecision)
	code, _, stderr = runCLI(t, payload(home, "Bash", map[string]string{"command": "ls"}), "hook", "claude-code", "--no-audit", "--allow-sandboxed")
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, stderr, "--allow-sandboxed needs --sandbox-bash")
}
