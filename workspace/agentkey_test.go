package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

// cordon run stays quiet about an agent's key setting only when the
// user's own settings make it.
func TestAgentKeyKept(t *testing.T) {
	codex, gemini := AgentCLIs["codex"], AgentCLIs["gemini"]
	for _, c := range []struct {
		name, file, content string
		agent               AgentCLI
		want                bool
	}{
		{"codex none", ".codex/config.toml", "", codex, false},
		{"codex all keys", ".codex/config.toml", "[shell_environment_policy]\nexclude = [\"OPENAI_API_KEY\", \"CODEX_API_KEY\", \"CODEX_ACCESS_TOKEN\"]\n", codex, true},
		{"codex glob", ".codex/config.toml", "[shell_environment_policy]\nexclude = [\"*_key\", \"*token*\"]\n", codex, true},
		{"codex one key", ".codex/config.toml", "[shell_environment_policy]\nexclude = [\"OPENAI_API_KEY\"]\n", codex, false},
		{"codex inherit none", ".codex/config.toml", "[shell_environment_policy]\ninherit = \"none\"\n", codex, true},
		{"codex bad toml", ".codex/config.toml", "[[[", codex, false},
		{"gemini on", ".gemini/settings.json", `{"security":{"environmentVariableRedaction":{"enabled":true}}}`, gemini, true},
		{"gemini off", ".gemini/settings.json", `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`, gemini, false},
		{"gemini key allowed", ".gemini/settings.json", `{"security":{"environmentVariableRedaction":{"enabled":true,"allowed":["gemini_api_key"]}}}`, gemini, false},
	} {
		home := t.TempDir()
		if c.content != "" {
			p := filepath.Join(home, c.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.agent.KeyKept(home, c.agent.Keys); got != c.want {
			t.Errorf("%s: KeyKept = %v, want %v", c.name, got, c.want)
		}
	}
}

// Codex's -c override of its exclude list replaces the user's, so it
// carries the user's patterns along with the keys.
func TestCodexKeyArgs(t *testing.T) {
	codex := AgentCLIs["codex"]
	home := t.TempDir()
	want := []string{"-c", `shell_environment_policy.exclude=["OPENAI_API_KEY","CODEX_API_KEY","CODEX_ACCESS_TOKEN"]`}
	if got := codex.KeyArgs(home, codex.Keys); !slices.Equal(got, want) {
		t.Errorf("no config.toml: KeyArgs = %q, want %q", got, want)
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("[shell_environment_policy]\nexclude = [\"AWS_*\", \"OPENAI_API_KEY\", \"a\\\"b<\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want = []string{"-c", `shell_environment_policy.exclude=["AWS_*","OPENAI_API_KEY","a\"b\u003c","CODEX_API_KEY","CODEX_ACCESS_TOKEN"]`}
	if got := codex.KeyArgs(home, codex.Keys); !slices.Equal(got, want) {
		t.Errorf("the user's excludes: KeyArgs = %q, want %q", got, want)
	}
	if got := codex.KeyArgs("", codex.Keys); len(got) != 2 {
		t.Errorf("no home: KeyArgs = %q, want the keys alone", got)
	}
}

// A CODEX_HOME inside the workspace keeps what Codex runs or obeys there
// read-only, as ~/.codex's, on every launch (Codex on the host reads it
// next); the rest of it, and the workspace, stay writable.
func TestComposeCodexHomeProtected(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	ch := filepath.Join(ws, "codex-home")
	if err := os.MkdirAll(ch, 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := Compose(Spec{Workspace: ws, Home: home, Environ: []string{"HOME=" + home, "CODEX_HOME=" + ch}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"config.toml", "hooks.json", "AGENTS.md", "rules/x.rules"} {
		if c.Canonical.Access(filepath.Join(ch, p), policy.Write) {
			t.Errorf("$CODEX_HOME/%s writable", p)
		}
	}
	for _, p := range []string{"codex-home/sessions/x.jsonl", "src/x.go"} {
		if !c.Canonical.Access(filepath.Join(ws, p), policy.Write) {
			t.Errorf("%s not writable", p)
		}
	}
	if got := codexHomeConfigs([]string{"CODEX_HOME=" + filepath.Join(home, ".codex")}, home); got != nil {
		t.Errorf("~/.codex as CODEX_HOME: %q, want nothing more", got)
	}
	if got := codexHomeConfigs([]string{"CODEX_HOME=rel"}, home); got != nil {
		t.Errorf("a relative CODEX_HOME: %q, want nothing", got)
	}
}
