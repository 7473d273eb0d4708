package workspace

import (
	"encoding/json"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxSettings bounds what cordon reads of an agent's settings file to
// tell whether its key setting is on: a file larger is taken as not.
const maxSettings = 1 << 20

// readSettings is the file at home/rel, at most maxSettings bytes, or
// nil.
func readSettings(home, rel string) []byte {
	f, err := os.Open(filepath.Join(home, rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil || len(b) > maxSettings {
		return nil
	}
	return b
}

// codexPolicy is the user's shell_environment_policy in
// ~/.codex/config.toml (zero when the file is missing, too large or not
// TOML).
type codexPolicy struct {
	Inherit string   `toml:"inherit"`
	Exclude []string `toml:"exclude"`
}

func readCodexPolicy(home string) (p codexPolicy, ok bool) {
	var c struct {
		Policy codexPolicy `toml:"shell_environment_policy"`
	}
	if home == "" {
		return p, false
	}
	b := readSettings(home, ".codex/config.toml")
	if b == nil || toml.Unmarshal(b, &c) != nil {
		return p, false
	}
	return c.Policy, true
}

// codexKeyKept reports whether the user's ~/.codex/config.toml keeps
// keys from the commands Codex runs: shell_environment_policy inherits
// nothing, or excludes each key (its patterns are globs, matched without
// regard to case).
func codexKeyKept(home string, keys []string) bool {
	p, ok := readCodexPolicy(home)
	if !ok {
		return false
	}
	if p.Inherit == "none" {
		return true
	}
	for _, k := range keys {
		if !slices.ContainsFunc(p.Exclude, func(e string) bool {
			ok, _ := path.Match(strings.ToUpper(e), strings.ToUpper(k))
			return ok
		}) {
			return false
		}
	}
	return true
}

// codexKeyArgs are Codex's own "-c" override of its
// shell_environment_policy.exclude: the user's patterns and the keys.
// The override replaces the user's list, so it carries it along; Codex
// reads its value as TOML, and a JSON array of strings is one.
func codexKeyArgs(home string, keys []string) []string {
	p, _ := readCodexPolicy(home)
	ex := slices.Clone(p.Exclude)
	for _, k := range keys {
		if !slices.Contains(ex, k) {
			ex = append(ex, k)
		}
	}
	b, err := json.Marshal(ex)
	if err != nil {
		return nil
	}
	return []string{"-c", "shell_environment_policy.exclude=" + string(b)}
}

// geminiKeyKept reports whether the user's ~/.gemini/settings.json turns
// on Gemini CLI's redaction and does not allow a key through it. A file
// with comments, which Gemini CLI takes, is taken as not.
func geminiKeyKept(home string, keys []string) bool {
	var s struct {
		Security struct {
			Redaction struct {
				Enabled bool     `json:"enabled"`
				Allowed []string `json:"allowed"`
			} `json:"environmentVariableRedaction"`
		} `json:"security"`
	}
	b := readSettings(home, ".gemini/settings.json")
	if b == nil || json.Unmarshal(b, &s) != nil || !s.Security.Redaction.Enabled {
		return false
	}
	return !slices.ContainsFunc(s.Security.Redaction.Allowed, func(a string) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(a, k) })
	})
}

// codexHomeConfigs are what Codex runs or obeys (its AgentCLI.Protected,
// under ~/.codex) under a CODEX_HOME of env's pointing elsewhere: Codex
// on the host reads its config.toml, hooks.json and AGENTS.md there, so
// a sandbox that could write them (a CODEX_HOME inside the workspace)
// would decide what Codex runs next. nil without an absolute CODEX_HOME,
// or with ~/.codex itself (AgentConfigPaths has those).
func codexHomeConfigs(env []string, home string) []string {
	if env == nil {
		env = os.Environ()
	}
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			dir = v // the last one wins, as in os/exec
		}
	}
	if !filepath.IsAbs(dir) || filepath.Clean(dir) == filepath.Join(home, ".codex") {
		return nil
	}
	var out []string
	for _, p := range AgentCLIs["codex"].Protected {
		if rel, ok := strings.CutPrefix(p, ".codex/"); ok {
			out = append(out, filepath.Join(dir, rel))
		}
	}
	return out
}
