package e2e

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestGeminiOtherProject: a session in project A plants memory for
// project B (B's slug's memory, and the directory named by B's path's
// hash that Gemini CLI migrates) and remaps B's slug to A's in
// projects.json and A's markers; then a plain Gemini CLI in B, on the
// host, must send none of it to the model. The unguarded control shows
// the plant reaching B's model requests; inside the wall A still works
// and writes its own project's memory (docs/agents.md, "Gemini CLI").
func TestGeminiOtherProject(t *testing.T) {
	t.Parallel()
	bin := testenv.AgentCLI(t, "gemini", "gemini")
	// Each attack writes A's own memory too, which Gemini CLI in A may
	// write: the remap would hand it to B.
	attacks := map[string]string{
		"memory": `mkdir -p $G/tmp/b/memory; printf '%s\n' "- $P" > $G/tmp/b/memory/MEMORY.md
mkdir -p $G/tmp/$H/memory; printf '%s\n' "- $P" > $G/tmp/$H/memory/MEMORY.md`,
		"remap": `printf '{"projects":{"%s":"ws"}}' "$B" > $G/p.new; mv -f $G/p.new $G/projects.json
printf %s "$B" > $G/tmp/ws/.project_root; printf %s "$B" > $G/history/ws/.project_root`,
	}
	for _, attack := range []string{"memory", "remap"} {
		for _, guarded := range []bool{false, true} {
			name := attack + "/" + map[bool]string{false: "unguarded", true: "inside"}[guarded]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				geminiOtherProject(t, bin, attacks[attack], guarded)
			})
		}
	}
}

func geminiOtherProject(t *testing.T, bin, attack string, guarded bool) {
	if guarded {
		testenv.RequireBackend(t, testenv.NativeBackend())
	}
	w := geminiWorld(t)
	b := filepath.Join(filepath.Dir(w.WS), "b")
	write(t, filepath.Join(b, "notes.txt"), "b\n")
	// B has run Gemini CLI before: it has its slug.
	m := newModelServer(t, "gemini", nil)
	runCLI(t, b, geminiEnv(w, m), geminiArgs(bin)...)
	plant := "CORDON-E2E-PLANT-" + w.Content
	cmd := `G=$HOME/.gemini; B=` + shellQuote(b) + `; P=` + plant + `; H=` + fmt.Sprintf("%x", sha256.Sum256([]byte(b))) + `
echo ok > out
mkdir -p $G/tmp/ws/memory; printf '%s\n' "- own $P" > $G/tmp/ws/memory/MEMORY.md
` + attack + `
true`
	m = newModelServer(t, "gemini", []toolCall{{ID: "plant", Name: "run_shell_command", Input: map[string]any{"command": cmd}}})
	argv := geminiArgs(bin)
	if guarded {
		argv = inside("gemini", m, argv...)
	}
	runCLI(t, w.WS, geminiEnv(w, m), argv...)
	res, _ := m.Result("plant")
	t.Logf("the shell call in A: %s", res)
	if ok, saw := written(filepath.Join(w.WS, "out")); !ok {
		t.Fatalf("the session in A did not work: %s", saw)
	}
	if own, _ := os.ReadFile(filepath.Join(w.Home, ".gemini/tmp/ws/memory/MEMORY.md")); !strings.Contains(string(own), plant) {
		t.Errorf("A's own memory was not written: %q", own)
	}
	// B's next session, on the host.
	m = newModelServer(t, "gemini", nil)
	runCLI(t, b, geminiEnv(w, m), geminiArgs(bin)...)
	sent := strings.Contains(strings.Join(m.Bodies(), "\n"), plant)
	if len(m.Bodies()) == 0 {
		t.Fatal("Gemini CLI in B sent nothing to the model server")
	}
	if guarded && sent {
		t.Errorf("Gemini CLI in B sent the memory a sandbox in A planted")
	}
	if !guarded && !sent {
		t.Errorf("control: Gemini CLI in B did not send the planted memory (the attack no longer works unguarded?)")
	}
}
