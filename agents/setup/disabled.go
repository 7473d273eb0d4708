package setup

import (
	"os"
	"path/filepath"
)

// Disabled says why the agent would not run the hooks in the settings
// file at path although they are there, "" when nothing in that file (or,
// for Codex, the config.toml beside it) turns them off that cordon knows
// of:
//   - Claude Code: "disableAllHooks": true;
//   - Gemini CLI: "hooksConfig": {"enabled": false}, or "cordon" among
//     "hooksConfig.disabled";
//   - Codex: features.hooks = false in config.toml, in any TOML spelling;
//     a config.toml cordon cannot read wholly counts as off (it cannot
//     tell).
func Disabled(a *Agent, path string) string {
	if a.Name == "codex" {
		path = filepath.Join(filepath.Dir(path), "config.toml")
	}
	return offIn(a, path)
}

// HooksOff says why the agent would run none of cordon's hooks, looking
// at every settings layer it reads (the project's shared and local
// files, the user's, the machine's managed ones), "" when none turns them
// off that cordon knows of. A layer overrides the file the hook is in, so
// each is asked on its own.
func HooksOff(a *Agent, home, project string, getenv func(string) string) string {
	for _, f := range a.layers(home, project, getenv) {
		if why := offIn(a, f); why != "" {
			return why
		}
	}
	return ""
}

// layers are the files where the agent reads a switch for all hooks.
func (a *Agent) layers(home, project string, getenv func(string) string) []string {
	var out []string
	add := func(base string, rel ...string) {
		if filepath.IsAbs(base) {
			out = append(out, filepath.Join(append([]string{base}, rel...)...))
		}
	}
	switch a.Name {
	case "claude-code":
		add(project, ".claude", "settings.json")
		add(project, ".claude", "settings.local.json")
		add(home, ".claude", "settings.json")
		add("/etc/claude-code", "managed-settings.json")
		add("/Library/Application Support/ClaudeCode", "managed-settings.json")
	case "gemini":
		add(project, ".gemini", "settings.json")
		add(home, ".gemini", "settings.json")
		add("/etc/gemini-cli", "settings.json")
		add("/Library/Application Support/GeminiCli", "settings.json")
	case "codex":
		add(project, ".codex", "config.toml")
		if d := getenv("CODEX_HOME"); filepath.IsAbs(d) {
			add(d, "config.toml")
		} else {
			add(home, ".codex", "config.toml")
		}
		// The machine's layer, and its requirements, which can allow
		// managed hooks only (codex-rs/hooks discovery).
		add("/etc/codex", "config.toml")
		add("/etc/codex", "requirements.toml")
	}
	return out
}

// offIn is Disabled for one layer's file (config.toml for Codex).
func offIn(a *Agent, path string) string {
	switch a.Name {
	case "claude-code", "gemini":
		return offInJSON(a, path)
	case "codex":
		return offInCodex(path)
	}
	return ""
}

// offInJSON is offIn for Claude Code's and Gemini's settings.
func offInJSON(a *Agent, path string) string {
	c, err := read(a, path)
	if err != nil || !c.Existed {
		return ""
	}
	_, root, err := parse(path, c.Old)
	if err != nil {
		return path + " cannot be read (" + err.Error() + "): it may turn hooks off"
	}
	if a.Name == "claude-code" {
		if v := root.get("disableAllHooks"); v != nil && string(c.Old[v.start:v.end]) == "true" {
			return path + ` sets "disableAllHooks": true`
		}
		// The machine's managed settings can allow their own hooks only.
		if v := root.get("allowManagedHooksOnly"); v != nil && filepath.Base(path) == "managed-settings.json" && string(c.Old[v.start:v.end]) == "true" {
			return path + ` sets "allowManagedHooksOnly": true`
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
	return ""
}

// offInCodex is offIn for a Codex config.toml or requirements.toml.
func offInCodex(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return ""
		}
		return path + " cannot be read (" + err.Error() + "): it may turn hooks off"
	}
	if filepath.Base(path) == "requirements.toml" {
		only, err := tomlBool(string(b), []string{"allow_managed_hooks_only"})
		switch {
		case only != nil && *only:
			return path + " allows managed hooks only (allow_managed_hooks_only = true)"
		case err != nil:
			return path + " has TOML cordon cannot read (" + err.Error() + "): it may turn hooks off"
		}
		return ""
	}
	off, err := tomlFalse(string(b), []string{"features", "hooks"})
	switch {
	case off:
		return path + " turns hooks off (features.hooks = false)"
	case err != nil:
		return path + " has TOML cordon cannot read (" + err.Error() + "): it may turn hooks off"
	}
	return ""
}
