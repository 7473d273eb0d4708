package setup

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Scope is where a hook is installed: one project, or every session of
// the user.
type Scope string

const (
	Project Scope = "project"
	User    Scope = "user"
)

// shape is how an agent lists the hooks of one event.
type shape int

const (
	// groups: [{"matcher": M, "hooks": [{"type": "command", "command": C}]}]
	// (Claude Code, Codex, Gemini CLI).
	groups shape = iota
	// flat: [{"command": C, ...}] or Copilot's [{"type": "command", "bash": C}].
	flat
)

// Agent is what cordon knows of one agent's hook settings.
type Agent struct {
	Name  string // as in 'cordon hook NAME'
	Title string // as people call it
	// project and user are the settings file, relative to the project
	// directory and to HOME; homeEnv, when set in the environment,
	// replaces HOME's part userDir (CODEX_HOME, COPILOT_HOME).
	project, user    string
	homeEnv, userDir string
	// events are the keys under "hooks" that get cordon's entry.
	events []string
	// matcher is the tool-name pattern of cordon's entry ("" for none):
	// the tools 'cordon hook NAME' decides; any other tool reaching the
	// hook would be denied.
	matcher string
	shape   shape
	// commandKey is the key holding the command line ("command", or
	// Copilot's "bash"); name, when set, is the hook's "name" (Gemini
	// shows it in its warnings).
	commandKey, name string
	// version: the file must say "version": 1 (Copilot, Cursor).
	version bool
	// ownFile: the file is cordon's alone (Copilot reads every *.json of
	// its hooks directory), so removing cordon's entries removes it.
	ownFile bool
	// Notes are what the user must know after installing: trust prompts
	// and the like.
	Notes string
	// Source is where the format above was read.
	Source string
}

// agents is every agent cordon installs into. The formats were read from
// each agent's published package and documentation (docs/agents.md).
var agents = []*Agent{
	{
		Name: "claude-code", Title: "Claude Code",
		project: ".claude/settings.json", user: ".claude/settings.json",
		events:  []string{"PreToolUse", "PostToolUse"},
		matcher: "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS",
		shape:   groups, commandKey: "command",
		Notes:  "Claude Code reads the hook at its next start; '/hooks' in Claude Code lists it.",
		Source: "@anthropic-ai/claude-code 2.1.197 (settings.json hooks.PreToolUse/PostToolUse)",
	},
	{
		Name: "codex", Title: "Codex CLI",
		project: ".codex/hooks.json", user: "hooks.json", homeEnv: "CODEX_HOME", userDir: ".codex",
		events:  []string{"PreToolUse"},
		matcher: "Bash|apply_patch",
		shape:   groups, commandKey: "command",
		Notes: "Codex runs a new or changed hook only once you trust it: at its next start it says " +
			"\"Hooks need review\"; choose \"Trust all and continue\" (a project's .codex is read only in a trusted project). " +
			"'codex exec' runs untrusted hooks only with --dangerously-bypass-hook-trust.",
		Source: "@openai/codex 0.171.0 (codex-rs/hooks discovery: hooks.json beside config.toml in CODEX_HOME and in a project's .codex)",
	},
	{
		Name: "gemini", Title: "Gemini CLI",
		project: ".gemini/settings.json", user: ".gemini/settings.json",
		events:  []string{"BeforeTool"},
		matcher: "^(run_shell_command|read_file|read_many_files|write_file|replace|glob|grep_search|list_directory)$",
		shape:   groups, commandKey: "command", name: "cordon",
		Notes:  "Gemini CLI runs a project's hooks only in a trusted folder, and warns once about each new project hook.",
		Source: "@google/gemini-cli 0.61.0 (settings schema: hooks.BeforeTool, HookDefinitionArray; hooksConfig.enabled defaults to true)",
	},
	{
		Name: "copilot", Title: "GitHub Copilot CLI",
		project: ".github/hooks/cordon.json", user: "hooks/cordon.json", homeEnv: "COPILOT_HOME", userDir: ".copilot",
		events: []string{"preToolUse"},
		shape:  flat, commandKey: "bash", version: true, ownFile: true,
		Notes:  "Copilot CLI loads every .github/hooks/*.json of the repository it starts in, and ~/.copilot/hooks/*.json.",
		Source: "GitHub Copilot CLI hooks reference, docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference (@github/copilot 1.0.102)",
	},
	{
		Name: "cursor", Title: "Cursor",
		project: ".cursor/hooks.json", user: ".cursor/hooks.json",
		events:  []string{"preToolUse"},
		matcher: "Shell|Read|Write|Edit|Delete|Grep|Glob|LS",
		shape:   flat, commandKey: "command", version: true,
		Notes:  "Cursor reloads hooks.json on save; its Hooks settings tab lists it.",
		Source: "Cursor agent hooks, cursor.com/docs/agent/hooks",
	},
}

// Agents lists the agents' names.
func Agents() []string {
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the agent called name.
func Lookup(name string) (*Agent, error) {
	for _, a := range agents {
		if a.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown agent %q: want %s", name, strings.Join(Agents(), ", "))
}

// SettingsPath is the file that holds the agent's hooks for scope:
// relative to project for Project, to home (or the agent's own variable,
// read with getenv) for User.
func (a *Agent) SettingsPath(scope Scope, home, project string, getenv func(string) string) string {
	if scope == Project {
		return filepath.Join(project, a.project)
	}
	if a.homeEnv != "" {
		if d := getenv(a.homeEnv); filepath.IsAbs(d) {
			return filepath.Join(d, a.user)
		}
		return filepath.Join(home, a.userDir, a.user)
	}
	return filepath.Join(home, a.user)
}
