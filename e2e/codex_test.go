package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// Codex 0.171 offers no file tool for a model it has no metadata for:
// it reads and writes through exec_command, a shell command line.
var codexTools = toolNames{
	Read: "exec_command", Write: "exec_command", Shell: "exec_command",
	ReadArgs: func(p string) map[string]any { return map[string]any{"cmd": "cat " + shellQuote(p)} },
	WriteArgs: func(p, c string) map[string]any {
		return map[string]any{"cmd": "mkdir -p " + shellQuote(filepath.Dir(p)) + "; printf %s " + shellQuote(c) + " > " + shellQuote(p)}
	},
	ShellArgs: func(c string) map[string]any { return map[string]any{"cmd": c} },
	// What Codex runs or obeys later: its settings, hooks, rules, and its
	// own executable as OpenAI's installer puts it.
	Settings: []string{".codex/config.toml", ".codex/hooks.json", ".codex/rules/default.rules", ".codex/packages/standalone/releases/0.171.0/bin/codex"},
}

// shellQuote quotes s for sh, keeping a leading "~/" outside the quotes
// so that the shell expands it, as the model would have written it.
func shellQuote(s string) string {
	pre := ""
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		pre, s = "~/", rest
	}
	return pre + "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func codexEnv(w *world) []string {
	return []string{
		"HOME=" + w.Home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb",
		"OPENAI_API_KEY=sk-cordon-e2e-" + w.AgentKey, "CORDON_E2E_HARMLESS=" + w.Harmless, "CODEX_HOME=" + w.Home + "/.codex", "CORDON_E2E_TOKEN=" + w.Secret,
	}
}

// codexArgs run one non-interactive session against the model server,
// with Codex's own sandbox and approvals off: only cordon stands between.
// codex exec has no turn limit to raise: it goes on while the model
// makes calls.
func codexArgs(bin string, m *modelServer) []string {
	return []string{bin, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
		"-c", `model_provider="e2e"`, "-c", `model="gpt-5-codex"`,
		"-c", fmt.Sprintf(`model_providers.e2e={name="e2e",base_url="%s/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`, m.URL),
		"run the scripted tool calls"}
}

func TestCodexInside(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "codex", "codex")
	testenv.RequireBackend(t, testenv.NativeBackend())
	// The user's config.toml sets no shell_environment_policy: cordon's
	// own -c override keeps the key from the commands Codex runs.
	w := newWorld(t)
	session(t, w, "openai", scenarios(codexTools), true, func(m *modelServer) {
		runCLI(t, w.WS, codexEnv(w), inside("codex", m, codexArgs(bin, m)...)...)
	})
}

func TestCodexUnguarded(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "codex", "codex")
	w := newWorld(t)
	session(t, w, "openai", scenarios(codexTools), false, func(m *modelServer) {
		runCLI(t, w.WS, codexEnv(w), codexArgs(bin, m)...)
	})
}

// TestCodexHook: Codex on the host, cordon's hook deciding each call
// through the PreToolUse hook 'cordon init codex --user --trust' writes
// in $CODEX_HOME/hooks.json and trusts in its config.toml: a plain
// 'codex exec' (no --dangerously-bypass-hook-trust, which it would need
// for a hook nobody trusted) runs it.
func TestCodexHook(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "codex", "codex")
	testenv.RequireBwrap(t)
	w := newWorld(t)
	initHook(t, w, "codex", "--trust")
	session(t, w, "openai", scenarios(codexTools), true, func(m *modelServer) {
		runCLI(t, w.WS, hookEnv(w, codexEnv(w)), codexArgs(bin, m)...)
	})
	hookDecided(t, w)
}

// TestCodexHookUntrusted is the control of TestCodexHook: without
// --trust, 'codex exec' runs no hook, and the write outside the
// workspace happens (issue 38.7).
func TestCodexHookUntrusted(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "codex", "codex")
	w := newWorld(t)
	initHook(t, w, "codex")
	session(t, w, "openai", scenarios(codexTools), false, func(m *modelServer) {
		runCLI(t, w.WS, hookEnv(w, codexEnv(w)), codexArgs(bin, m)...)
	})
}
