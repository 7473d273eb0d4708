package e2e

import (
	"testing"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// Copilot CLI's own tools: view and create take paths (a relative one
// against the working directory, "~" included: seen, "Path .../ws/~/.ssh/...
// does not exist"), bash a command line. create refuses a file that
// exists, so the settings written are ones a user may not have yet: an
// MCP server list (its commands run at the next start) and a hook file.
var copilotTools = toolNames{
	Read: "view", Write: "create", Shell: "bash",
	ReadArgs:     func(p string) map[string]any { return map[string]any{"path": p} },
	WriteArgs:    func(p, c string) map[string]any { return map[string]any{"path": p, "file_text": c} },
	ShellArgs:    func(c string) map[string]any { return map[string]any{"command": c, "description": "scripted"} },
	TildeLiteral: true,
	Settings:     []string{".copilot/mcp-config.json", ".copilot/hooks/planted.json"},
	// Its unguarded control: neither the shell's env nor its copy in the
	// workspace held COPILOT_PROVIDER_API_KEY's value.
	KeepsOwnKey: true,
}

// copilotEnv points Copilot CLI at the model server as a provider of its
// own (BYOK, Anthropic's Messages API), offline: no GitHub sign-in, no
// traffic to GitHub.
func copilotEnv(w *world, m *modelServer) []string {
	return []string{
		"HOME=" + w.Home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb",
		"COPILOT_PROVIDER_BASE_URL=" + m.URL, "COPILOT_PROVIDER_TYPE=anthropic",
		"COPILOT_PROVIDER_API_KEY=sk-ant-cordon-e2e-" + w.AgentKey, "CORDON_E2E_HARMLESS=" + w.Harmless, "COPILOT_MODEL=claude-sonnet-4", "CORDON_E2E_TOKEN=" + w.Secret,
		"COPILOT_OFFLINE=true", "COPILOT_HOME=" + w.Home + "/.copilot",
	}
}

// copilotArgs run one headless session with every tool and path allowed
// by Copilot itself: only cordon stands between.
func copilotArgs(bin string) []string {
	return []string{bin, "-p", "run the scripted tool calls", "--allow-all", "--no-ask-user",
		"--no-auto-update", "--disable-builtin-mcps", "--no-custom-instructions"}
}

// TestCopilotUnguarded is the control: without cordon every scenario
// happens.
func TestCopilotUnguarded(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "copilot", "copilot")
	w := newWorld(t)
	session(t, w, "anthropic", scenarios(copilotTools), false, func(m *modelServer) {
		runCLI(t, w.WS, copilotEnv(w, m), copilotArgs(bin)...)
	})
}

// TestCopilotHook: Copilot CLI on the host, cordon's hook deciding each
// call through the preToolUse hook 'cordon init copilot --user' writes in
// ~/.copilot/hooks (--sandbox-bash: allowed shell commands run inside
// cordon run).
func TestCopilotHook(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "copilot", "copilot")
	testenv.RequireBwrap(t)
	w := newWorld(t)
	initHook(t, w, "copilot")
	session(t, w, "anthropic", scenarios(copilotTools), true, func(m *modelServer) {
		runCLI(t, w.WS, hookEnv(w, copilotEnv(w, m)), copilotArgs(bin)...)
	})
	hookDecided(t, w)
}
