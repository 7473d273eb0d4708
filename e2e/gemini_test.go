package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// Gemini CLI 0.61's read_file and write_file refuse, on their own, a path
// outside the workspace and one in .git (its unguarded control shows
// them inert): the key is read, and .git/hooks and settings written,
// through run_shell_command, the way that reaches them.
var geminiTools = toolNames{
	Read: "read_file", Write: "run_shell_command", Shell: "run_shell_command",
	ReadArgs: func(p string) map[string]any { return map[string]any{"file_path": p} },
	WriteArgs: func(p, c string) map[string]any {
		return map[string]any{"command": "mkdir -p " + shellQuote(filepath.Dir(p)) + "; printf %s " + shellQuote(c) + " > " + shellQuote(p)}
	},
	ShellArgs:    func(c string) map[string]any { return map[string]any{"command": c} },
	ReadConfined: true,
	// What Gemini CLI runs or obeys later: its settings, trust, commands,
	// and the helper it spawns for the Gemma router.
	Settings: []string{".gemini/settings.json", ".gemini/.env", ".gemini/trustedFolders.json", ".gemini/commands/x.toml", ".gemini/bin/litert/lit.linux_x86_64"},
}

// geminiEnv points Gemini CLI at the model server with an API key (the
// only sign-in whose base URL can be moved).
func geminiEnv(w *world, m *modelServer) []string {
	return []string{
		"HOME=" + w.Home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "TERM=dumb",
		"GEMINI_API_KEY=cordon-e2e-" + w.AgentKey, "CORDON_E2E_HARMLESS=" + w.Harmless, "GOOGLE_GEMINI_BASE_URL=" + m.URL, "CORDON_E2E_TOKEN=" + w.Secret,
		"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_DEFAULT_AUTH_TYPE=gemini-api-key",
		// Headless, an untrusted folder turns --yolo back into asking.
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
}

// geminiWorld is a world whose user picked the API key sign-in, which
// headless Gemini CLI takes from settings.json only.
func geminiWorld(t *testing.T) *world {
	w := newWorld(t)
	write(t, filepath.Join(w.Home, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`)
	return w
}

// geminiArgs run one headless session with every tool call approved
// (--yolo): only cordon stands between the model and the host. Gemini
// CLI's turn limit (model.maxSessionTurns) is off unless set.
func geminiArgs(bin string) []string {
	return []string{bin, "-p", "run the scripted tool calls", "--yolo", "--output-format", "json", "-m", "gemini-2.5-flash"}
}

// geminiKeyRedacted are the user's settings of geminiWorld with Gemini
// CLI's own redaction on, which a user turns on so that the commands it
// runs, its hooks and MCP servers do not get its key: cordon cannot set it
// for them (docs/threat-model.md, "Secrets in the environment"), and keeps
// the file read-only inside.
const geminiKeyRedacted = `{"security":{"auth":{"selectedType":"gemini-api-key"},"environmentVariableRedaction":{"enabled":true}}}`

func TestGeminiInside(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "gemini", "gemini")
	testenv.RequireBackend(t, testenv.NativeBackend())
	w := geminiWorld(t)
	write(t, filepath.Join(w.Home, ".gemini", "settings.json"), geminiKeyRedacted)
	session(t, w, "gemini", scenarios(geminiTools), true, func(m *modelServer) {
		runCLI(t, w.WS, geminiEnv(w, m), inside("gemini", m, geminiArgs(bin)...)...)
	})
}

func TestGeminiUnguarded(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "gemini", "gemini")
	w := geminiWorld(t)
	session(t, w, "gemini", scenarios(geminiTools), false, func(m *modelServer) {
		runCLI(t, w.WS, geminiEnv(w, m), geminiArgs(bin)...)
	})
}

// TestGeminiHook: Gemini CLI on the host, cordon's hook deciding each
// call through the BeforeTool hook 'cordon init gemini --user' writes in
// ~/.gemini/settings.json (user scope: a project's hooks need a trusted
// folder and warn first).
func TestGeminiHook(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "gemini", "gemini")
	testenv.RequireBwrap(t)
	w := geminiWorld(t)
	initHook(t, w, "gemini")
	session(t, w, "gemini", scenarios(geminiTools), true, func(m *modelServer) {
		runCLI(t, w.WS, hookEnv(w, geminiEnv(w, m)), geminiArgs(bin)...)
	})
	hookDecided(t, w)
}
