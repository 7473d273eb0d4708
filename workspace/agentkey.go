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

// codexKeyKept reports whether the user's ~/.codex/config.toml keeps
// keys from the commands Codex runs: shell_environment_policy inherits
// nothing, or excludes each key (its patterns are globs, matched without
// regard to case).
func codexKeyKept(home string, keys []string) bool {
	var c struct {
		Policy struct {
			Inherit string   `toml:"inherit"`
			Exclude []string `toml:"exclude"`
		} `toml:"shell_environment_policy"`
	}
	b := readSettings(home, ".codex/config.toml")
	if b == nil || toml.Unmarshal(b, &c) != nil {
		return false
	}
	if c.Policy.Inherit == "none" {
		return true
	}
	for _, k := range keys {
		if !slices.ContainsFunc(c.Policy.Exclude, func(p string) bool {
			ok, _ := path.Match(strings.ToUpper(p), strings.ToUpper(k))
			return ok
		}) {
			return false
		}
	}
	return true
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
