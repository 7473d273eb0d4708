package permission

import (
	"encoding/json"
	"fmt"
)

// Core tool names.
const (
	ToolBash      = "bash"
	ToolReadFile  = "read_file"
	ToolWriteFile = "write_file"
	ToolEditFile  = "edit_file"
	ToolGlob      = "glob"
)

// tool says how to read a request's arguments: the core tool it is, which
// argument names the path, whether the path is required, whether the tool
// descends into directories, and how the agent whose tool it is reads a
// path (spell). A row is one tool of one agent: answering for another
// agent is adding its rows, with its spelling.
type tool struct {
	core      string
	pathKey   string // "" for tools without a path
	optional  bool   // path may be absent: the workspace is meant
	globKey   string // a glob pattern whose static prefix is checked
	recursive bool
	spell     spelling
	// walk: the pattern filters a ripgrep walk (--glob), where a filter
	// without a slash matches at any depth: such a pattern is decided on
	// where the walk starts (subject.walkRoot).
	walk bool
	// nocase: the agent matches the pattern's names without case (Gemini
	// CLI globs with nocase unless the call sets case_sensitive), so
	// ".SSH/*" lists ~/.ssh on any volume: the pattern is decided
	// against every root its spelling folds onto.
	nocase bool
}

// ToolSet names whose tool names a decider reads: each agent names its
// tools, and spells their paths, its own way (docs/agents.md). The zero
// value is cordon's core names with Claude Code's.
type ToolSet string

// The tool sets.
const (
	ToolsClaudeCode ToolSet = ""
	ToolsCodex      ToolSet = "codex"
	ToolsGemini     ToolSet = "gemini"
	ToolsCopilot    ToolSet = "copilot"
	ToolsCursor     ToolSet = "cursor"
)

// toolSets are the rows of each agent's tools. Every set but Claude
// Code's holds only that agent's names, so a name cordon's runner or
// another agent uses (read_file, bash) is never read with the wrong
// fields or the wrong spelling.
var toolSets = map[ToolSet]map[string]tool{
	ToolsClaudeCode: tools,
	// Codex CLI: its shell tools reach hooks as Bash with
	// {"command": ...}; apply_patch's paths are decided by the adapter
	// (agents/codex), which turns each into an edit_file row below.
	ToolsCodex: {
		"Bash":             {core: ToolBash},
		"apply_patch_file": {core: ToolEditFile, pathKey: "path", spell: spellRelaxed},
	},
	// Gemini CLI: paths relative to the project directory, never trimmed,
	// "~" not expanded (the scope refuses it), and a leading "@" or a
	// %-escape refused (Gemini strips the one and URI-decodes the other).
	ToolsGemini: {
		"run_shell_command": {core: ToolBash},
		"read_file":         {core: ToolReadFile, pathKey: "file_path", spell: spellGemini},
		"write_file":        {core: ToolWriteFile, pathKey: "file_path", spell: spellGemini},
		"replace":           {core: ToolEditFile, pathKey: "file_path", spell: spellGemini},
		"list_directory":    {core: ToolReadFile, pathKey: "dir_path", recursive: true, spell: spellGemini},
		"glob":              {core: ToolGlob, pathKey: "dir_path", optional: true, globKey: "pattern", recursive: true, spell: spellGemini, walk: true, nocase: true},
		"grep_search":       {core: ToolGlob, pathKey: "dir_path", optional: true, recursive: true, spell: spellGemini},
	},
	// GitHub Copilot CLI: file tools take absolute paths only; glob and
	// grep take "paths" (the adapter splits a list into one row each).
	ToolsCopilot: {
		"bash":               {core: ToolBash},
		"view":               {core: ToolReadFile, pathKey: "path", recursive: true, spell: spellAbsolute},
		"create":             {core: ToolWriteFile, pathKey: "path", spell: spellAbsolute},
		"edit":               {core: ToolEditFile, pathKey: "path", spell: spellAbsolute},
		"str_replace_editor": {core: ToolEditFile, pathKey: "path", spell: spellAbsolute},
		"glob":               {core: ToolGlob, pathKey: "paths", optional: true, globKey: "pattern", recursive: true, spell: spellAbsolute, walk: true},
		"grep":               {core: ToolGlob, pathKey: "paths", optional: true, recursive: true, spell: spellAbsolute},
	},
	// Cursor: beforeShellExecution and beforeReadFile, which the adapter
	// turns into these rows.
	ToolsCursor: {
		"shell":     {core: ToolBash},
		"read_file": {core: ToolReadFile, pathKey: "file_path", spell: spellAbsolute},
	},
}

// Shell reports whether name is a tool of set that runs a shell command.
func (set ToolSet) Shell(name string) bool {
	t, ok := toolSets[set][name]
	return ok && t.core == ToolBash
}

// Known reports whether set has a tool called name.
func (set ToolSet) Known(name string) bool {
	_, ok := toolSets[set][name]
	return ok
}

// tools maps cordon's core names and Claude Code's names onto core tools.
// Grep and LS are reads that descend (they enumerate what is below them).
// Claude Code's Monitor runs a shell command as Bash does (its permission
// check is Bash's), so it is decided, and sandboxed, as Bash.
var tools = map[string]tool{
	ToolBash:       {core: ToolBash},
	ToolReadFile:   {core: ToolReadFile, pathKey: "path"},
	ToolWriteFile:  {core: ToolWriteFile, pathKey: "path"},
	ToolEditFile:   {core: ToolEditFile, pathKey: "path"},
	ToolGlob:       {core: ToolGlob, globKey: "pattern", recursive: true},
	"Bash":         {core: ToolBash},
	"Monitor":      {core: ToolBash},
	"Read":         {core: ToolReadFile, pathKey: "file_path", spell: spellClaudeCode},
	"Write":        {core: ToolWriteFile, pathKey: "file_path", spell: spellClaudeCode},
	"Edit":         {core: ToolEditFile, pathKey: "file_path", spell: spellClaudeCode},
	"MultiEdit":    {core: ToolEditFile, pathKey: "file_path", spell: spellClaudeCode},
	"NotebookEdit": {core: ToolEditFile, pathKey: "notebook_path", spell: spellClaudeCode},
	"Glob":         {core: ToolGlob, pathKey: "path", optional: true, globKey: "pattern", recursive: true, spell: spellClaudeCode, walk: true},
	"Grep":         {core: ToolGlob, pathKey: "path", optional: true, recursive: true, spell: spellClaudeCode},
	"LS":           {core: ToolReadFile, pathKey: "path", recursive: true, spell: spellClaudeCode},
}

// CoreName maps a tool name (core or Claude Code's) to its core name.
func CoreName(name string) (string, bool) {
	t, ok := tools[name]
	return t.core, ok
}

// Call is a request whose arguments have been checked: what a handler
// needs, with the path already resolved the way the decision saw it.
type Call struct {
	Request
	Tool     string // core name
	Command  string // bash
	Path     string // the path argument as the agent reads it ("" when absent)
	Resolved string // where Path (or the glob's static prefix) really points
	Pattern  string // glob
	// Args is the arguments object, for tool-specific fields (content,
	// old_string, ...).
	Args map[string]json.RawMessage
}

// caseSensitive reports Gemini's glob argument case_sensitive: true, the
// only way its glob matches with case; anything else folds.
func (c *Call) caseSensitive() bool {
	return string(c.Args["case_sensitive"]) == "true"
}

// String reads a string argument; missing is "", false.
func (c *Call) String(key string) (string, bool, error) {
	raw, ok := c.Args[key]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("argument %q of %s is not a string", key, c.Name)
	}
	return s, true, nil
}

// parse checks arguments and turns the path argument into the path the
// agent opens (home is its HOME); a non-nil error is the reason for
// request.invalid_arguments.
func parse(req Request, t tool, home string) (*Call, error) {
	c := &Call{Request: req, Tool: t.core}
	if len(req.Arguments) == 0 {
		return nil, fmt.Errorf("%s has no arguments; an object is required", req.Name)
	}
	if err := json.Unmarshal(req.Arguments, &c.Args); err != nil || c.Args == nil {
		return nil, fmt.Errorf("arguments of %s are not a JSON object", req.Name)
	}
	var err error
	if t.core == ToolBash {
		var ok bool
		if c.Command, ok, err = c.String("command"); err != nil {
			return nil, err
		}
		if !ok || c.Command == "" {
			return nil, fmt.Errorf("%s has an empty command", req.Name)
		}
		return c, nil
	}
	if t.pathKey != "" {
		var ok bool
		if c.Path, ok, err = c.String(t.pathKey); err != nil {
			return nil, err
		}
		if (!ok || c.Path == "") && !t.optional {
			return nil, fmt.Errorf("%s needs a non-empty %q", req.Name, t.pathKey)
		}
		sp := t.spell
		if mutation.noSpelling {
			sp = spellExact
		}
		if c.Path, err = sp.open(req.Name, t.pathKey, c.Path, home); err != nil {
			return nil, err
		}
	}
	if t.globKey != "" {
		var ok bool
		if c.Pattern, ok, err = c.String(t.globKey); err != nil {
			return nil, err
		}
		if !ok || c.Pattern == "" {
			return nil, fmt.Errorf("%s needs a non-empty %q", req.Name, t.globKey)
		}
		if t.spell != spellExact {
			// The pattern is not trimmed (Claude Code takes its base
			// directory from it as written), but it is shown in prompts.
			if err := unreadable(req.Name, t.globKey, c.Pattern); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}
