package setup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"
)

// CodexTrustFix is what the user runs so that Codex runs cordon's hook.
const CodexTrustFix = "start 'codex' once in a terminal: at \"Hooks need review\" choose \"Trust all and continue\" " +
	"(or open /hooks and trust cordon's PreToolUse hook); until then 'codex exec' runs every call without it"

// CodexUntrusted says why Codex would not run cordon's hooks in the
// hooks.json at path for want of trust, "" when each of them has a
// trust decision. Codex (0.171, codex-rs/hooks discovery) runs a user or
// project hook only when [hooks.state."<key>"] in its configuration has a
// trusted_hash equal to the hook's current hash, and none whose state
// says enabled = false; the key is "<hooks.json>:<event>:<group>:<handler>"
// (event in snake case, indices from 0). cordon does not compute Codex's
// hash (a digest of Codex's own TOML serialization of the hook): a
// recorded hash is taken as trust, and a hook changed since (Codex says
// "modified") is for Codex's review to show. configs are the config.toml
// files whose hooks.state Codex merges (the user's, the project's).
func CodexUntrusted(path string, configs []string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var file struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(b, &file) != nil {
		return ""
	}
	states := map[string]map[string]any{}
	for _, c := range configs {
		src, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		var doc struct {
			Hooks struct {
				State map[string]map[string]any `toml:"state"`
			} `toml:"hooks"`
		}
		if _, err := toml.Decode(string(src), &doc); err != nil {
			return fmt.Sprintf("%s has TOML cordon cannot read (%v): Codex's trust in the hook is unknown", c, err)
		}
		for k, v := range doc.Hooks.State {
			states[k] = v
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		for gi, g := range file.Hooks[event] {
			for hi, h := range g.Hooks {
				if _, _, ok := CordonHook(h.Command); !ok {
					continue
				}
				key := fmt.Sprintf("%s:%s:%d:%d", abs, snake(event), gi, hi)
				st := states[key]
				if on, ok := st["enabled"].(bool); ok && !on {
					return fmt.Sprintf("its state [hooks.state.%q] says enabled = false", key)
				}
				if h, _ := st["trusted_hash"].(string); h == "" {
					return fmt.Sprintf("Codex has no trust decision for it ([hooks.state.%q] has no trusted_hash)", key)
				}
			}
		}
	}
	return ""
}

// snake is Codex's label of a hook event in a trust key.
func snake(event string) string {
	var out []byte
	for i := 0; i < len(event); i++ {
		c := event[i]
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				out = append(out, '_')
			}
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

// CodexConfigs are the config.toml files whose hooks.state Codex reads
// for the hooks of a user (CODEX_HOME, else ~/.codex) and of project.
func CodexConfigs(home, project string, getenv func(string) string) []string {
	var out []string
	if filepath.IsAbs(project) {
		out = append(out, filepath.Join(project, ".codex", "config.toml"))
	}
	if d := getenv("CODEX_HOME"); filepath.IsAbs(d) {
		out = append(out, filepath.Join(d, "config.toml"))
	} else if filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".codex", "config.toml"))
	}
	return out
}
