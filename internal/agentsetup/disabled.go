package agentsetup

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Disabled says why the agent would not run the hooks in the settings
// file at path although they are there, "" when nothing turns them off
// that cordon knows of:
//   - Claude Code: "disableAllHooks": true in that file;
//   - Gemini CLI: "hooksConfig": {"enabled": false}, or "cordon" among
//     "hooksConfig.disabled";
//   - Codex: hooks = false in the [features] table of config.toml
//     beside hooks.json (or features.hooks = false at its top).
func Disabled(a *Agent, path string) string {
	switch a.Name {
	case "claude-code", "gemini":
		c, err := read(a, path)
		if err != nil || !c.Existed {
			return ""
		}
		_, root, err := parse(path, c.Old)
		if err != nil {
			return ""
		}
		if a.Name == "claude-code" {
			if v := root.get("disableAllHooks"); v != nil && string(c.Old[v.start:v.end]) == "true" {
				return path + ` sets "disableAllHooks": true`
			}
			return ""
		}
		hc := root.get("hooksConfig")
		if v := hc.get("enabled"); v != nil && string(c.Old[v.start:v.end]) == "false" {
			return path + ` sets "hooksConfig": {"enabled": false}`
		}
		if d := hc.get("disabled"); d != nil && d.kind == '[' {
			for _, e := range d.elems {
				if e.text() == a.name {
					return path + ` lists "cordon" in "hooksConfig.disabled"`
				}
			}
		}
	case "codex":
		cfg := filepath.Join(filepath.Dir(path), "config.toml")
		if codexHooksOff(cfg) {
			return cfg + " turns hooks off ([features] hooks = false)"
		}
	}
	return ""
}

// codexHooksOff reads just enough TOML to find hooks = false in the
// [features] table, or features.hooks = false before the first table.
func codexHooksOff(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if strings.HasPrefix(line, "[") {
			table = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(v) != "false" {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"`)
		if (table == "features" && k == "hooks") || (table == "" && k == "features.hooks") {
			return true
		}
	}
	return false
}
