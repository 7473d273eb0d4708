package workspace

import (
	"os"
	"path/filepath"
	"testing"
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
