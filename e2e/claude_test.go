package e2e

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

var claudeTools = toolNames{
	Read: "Read", Write: "Write", Shell: "Bash",
	ReadArgs:  func(p string) map[string]any { return map[string]any{"file_path": p} },
	WriteArgs: func(p, c string) map[string]any { return map[string]any{"file_path": p, "content": c} },
	ShellArgs: func(c string) map[string]any { return map[string]any{"command": c, "description": "scripted"} },
	// Another project's auto-memory: every later session there obeys it.
	Settings: []string{".claude/settings.json", ".claude.json", ".claude/projects/-home-u-other-project/memory/MEMORY.md"},
	// Claude Code's path expansion trims the path (docs/claude-code.md).
	TrimsBlank: true,
}

// claudeEnv points Claude Code at the model server, with no onboarding,
// no update check and no traffic besides the API.
func claudeEnv(w *world, m *modelServer) []string {
	return []string{
		"HOME=" + w.Home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb",
		"ANTHROPIC_BASE_URL=" + m.URL, "ANTHROPIC_API_KEY=sk-ant-cordon-e2e-" + w.AgentKey, "CORDON_E2E_HARMLESS=" + w.Harmless, "CORDON_E2E_TOKEN=" + w.Secret,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
		// --dangerously-skip-permissions refuses root without it: the
		// suite runs as root on CI.
		"IS_SANDBOX=1",
	}
}

// claudeArgs run one headless session with Claude Code's own permission
// checks off: only cordon stands between the model and the host.
// --max-turns bounds the agent's turns (one per tool call, then the
// final text): room for every call and two to spare.
func claudeArgs(bin string, calls int) []string {
	return []string{bin, "-p", "run the scripted tool calls", "--output-format", "json",
		"--dangerously-skip-permissions", "--max-turns", strconv.Itoa(calls + 2)}
}

// TestClaudeCodeHook: Claude Code runs on the host, cordon's hook decides
// every tool call (--sandbox-bash: allowed shell commands run inside
// cordon run).
func TestClaudeCodeHook(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "claude", "claude")
	testenv.RequireBwrap(t)
	scs := scenarios(claudeTools)
	w := newWorld(t)
	initHook(t, w, "claude-code")
	session(t, w, "anthropic", scs, true, func(m *modelServer) {
		runCLI(t, w.WS, hookEnv(w, claudeEnv(w, m)), claudeArgs(bin, len(scs))...)
	})
	hookDecided(t, w)
}

// TestClaudeCodeInside: Claude Code itself runs inside the sandbox
// (cordon run --agent claude-code), with no hook: the wall alone holds.
func TestClaudeCodeInside(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "claude", "claude")
	testenv.RequireBackend(t, testenv.NativeBackend())
	scs := scenarios(claudeTools)
	w := newWorld(t)
	session(t, w, "anthropic", scs, true, func(m *modelServer) {
		runCLI(t, w.WS, claudeEnv(w, m), inside("claude-code", m, claudeArgs(bin, len(scs))...)...)
	})
}

// TestClaudeCodeBothWalls: Claude Code inside 'cordon run --agent
// claude-code' with cordon's hook configured, as a user who has the hook
// installed and starts the agent inside: the hook decides inside, and a
// shell command it sends to 'cordon run' must still run.
func TestClaudeCodeBothWalls(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "claude", "claude")
	testenv.RequireBackend(t, testenv.NativeBackend())
	scs := scenarios(claudeTools)
	w := newWorld(t)
	// Not init's settings: the hook they run keeps an audit log in
	// cordon's state directory, which is read-only inside the sandbox, so
	// that hook fails closed and denies every call (even a read in the
	// workspace). Until the hook knows what to do about its log inside a
	// sandbox, this test runs it with --no-audit.
	write(t, filepath.Join(w.Home, ".claude", "settings.json"), mustJSON(map[string]any{
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{
			"matcher": "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS",
			"hooks": []any{map[string]any{"type": "command",
				"command": cordonBin + " hook claude-code --no-audit --sandbox-bash --allow-sandboxed"}},
		}}},
	}))
	session(t, w, "anthropic", scs, true, func(m *modelServer) {
		runCLI(t, w.WS, claudeEnv(w, m), inside("claude-code", m, claudeArgs(bin, len(scs))...)...)
	})
}

// TestClaudeCodeUnguarded is the control: without cordon, every scenario
// happens (the key leaks, the hook is planted), so the guarded runs above
// pass because cordon stopped them, not because a scenario was inert.
func TestClaudeCodeUnguarded(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "claude", "claude")
	scs := scenarios(claudeTools)
	w := newWorld(t)
	session(t, w, "anthropic", scs, false, func(m *modelServer) {
		runCLI(t, w.WS, claudeEnv(w, m), claudeArgs(bin, len(scs))...)
	})
}
