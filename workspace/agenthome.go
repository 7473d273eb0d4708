package workspace

import (
	"path"
	"strings"
)

// HomeClass is what an agent does later with a path under its home, read
// from the agent's own code (docs/agents.md, "The agent's home, mapped").
type HomeClass int

const (
	// Keeps: transcripts, logs, caches, history, databases: writable.
	Keeps HomeClass = iota + 1
	// Runs: binaries, packages, plugins, extensions, hooks, helpers it
	// spawns: read-only.
	Runs
	// Obeys: memory, instructions, commands, agents, skills, settings,
	// trust decisions, acknowledgments: read-only.
	Obeys
	// Secrets: its sign-in, readable by this agent alone, never written.
	Secrets
)

func (c HomeClass) String() string {
	return [...]string{"unclassified", "keeps", "runs", "obeys", "secrets"}[c]
}

// HomePath is one row of an agent's home map. Path is under HOME, slash
// separated; "*" is one name (path.Match); a row covers its path and all
// below it. Source is the code it was read from.
type HomePath struct {
	Path   string
	Class  HomeClass
	Source string
}

// AgentHomes are the maps, per --agent name, of Claude Code 2.1.332,
// Codex 0.171.0, Gemini CLI 0.61.0 and Copilot CLI 1.0.102 (docs/agents.md
// has them as tables, which TestAgentHomesDoc holds to these). The
// read-only paths inside each agent's state directories
// (AgentCLI.Protected) are built from them; a test holds the rest of the
// policy and a real run's home against them.
var AgentHomes = map[string][]HomePath{
	"claude-code": {
		{".claude/projects/*/memory", Obeys, "auto-memory: projects/<key of the repository root>/memory, loaded into every session of that project (the memory directory's resolveEntry)"},
		{".claude/projects", Keeps, "transcripts per working directory (projects/<key>/<session>.jsonl), resumed by --resume"},
		{".claude/sessions", Keeps, "session records"},
		{".claude/todos", Keeps, "to-do lists"},
		{".claude/plans", Keeps, "plan mode's plans"},
		{".claude/file-history", Keeps, "the backups /rewind restores"},
		{".claude/backups", Keeps, "~/.claude.json backups"},
		{".claude/paste-cache", Keeps, "pasted text"},
		{".claude/statsig", Keeps, "feature flags"},
		{".claude/telemetry", Keeps, "telemetry queue"},
		{".claude/debug", Keeps, "debug logs"},
		{".claude/cache", Keeps, "caches"},
		{".cache/claude-cli-nodejs", Keeps, "logs and MCP logs (the cache paths: XDG_CACHE_HOME/claude-cli-nodejs)"},
		{".claude/history.jsonl", Keeps, "prompt history"},
		{".claude.json", Obeys, "MCP servers per user and project, allowed tools, trust"},
		{".claude/settings.json", Runs, "hooks, status line, apiKeyHelper: shell commands"},
		{".claude/settings.local.json", Runs, "as settings.json"},
		{".claude/CLAUDE.md", Obeys, "user instructions"},
		{".claude/commands", Obeys, "slash commands"},
		{".claude/agents", Obeys, "subagents"},
		{".claude/skills", Obeys, "skills (and their hooks)"},
		{".claude/hooks", Runs, "hook scripts"},
		{".claude/plugins", Runs, "plugins: hooks, MCP servers, commands"},
		{".claude/output-styles", Obeys, "output styles: system prompt text"},
		{".claude/keybindings.json", Obeys, "key bindings"},
		{".claude/.credentials.json", Secrets, "sign-in"},
		{".claude/shell-snapshots", Runs, "sourced by the Bash tool before each command"},
		{".claude/session-env", Runs, "sourced by the Bash tool"},
	},
	"codex": {
		{".codex/config.toml", Runs, "[hooks], [mcp_servers], model providers, profiles, sandbox and approval settings"},
		{".codex/hooks.json", Runs, "hooks"},
		{".codex/.env", Obeys, "environment loaded at start"},
		{".codex/auth.json", Secrets, "sign-in"},
		{".codex/AGENTS.md", Obeys, "instructions"},
		{".codex/AGENTS.override.md", Obeys, "instructions"},
		{".codex/rules", Obeys, "command rules: what runs without asking"},
		{".codex/prompts", Obeys, "custom prompts"},
		{".codex/skills", Obeys, "skills"},
		{".codex/plugins", Runs, "plugins"},
		{".codex/shell_snapshots", Runs, "sourced before each command"},
		{".codex/tmp", Runs, "arg0 helper links put first on PATH"},
		{".codex/.tmp", Runs, "plugins staged before plugins/"},
		{".codex/packages", Runs, "the standalone installer's releases/<v>/bin/codex, which current and ~/.local/bin/codex point at"},
		{".codex/*.sqlite", Keeps, "state, logs, thread history databases; the memories in them a later session reads (residual)"},
		{".codex/*.sqlite-wal", Keeps, "SQLite write-ahead logs"},
		{".codex/*.sqlite-shm", Keeps, "SQLite shared memory"},
		{".codex/sessions", Keeps, "rollouts (transcripts), resumed by codex resume"},
		{".codex/archived_sessions", Keeps, "archived rollouts"},
		{".codex/log", Keeps, "logs"},
		{".codex/history.jsonl", Keeps, "prompt history"},
		{".codex/installation_id", Keeps, "an identifier"},
		{".codex/version.json", Keeps, "the update check's cache"},
		{".codex/models_cache.json", Keeps, "the model list's cache"},
		{".codex/cache", Keeps, "caches"},
		{".codex/*.lock", Keeps, "lock files"},
		{".codex/thread-writer-locks", Keeps, "the thread writers' coordination lock (.coordination.lock)"},
		{".codex/.sandbox_migration", Obeys, "execpolicy's marker that the one-time migration of sandbox settings ran (execpolicy/src/sandbox_migration.rs): a planted one makes a later Codex skip it; writable, made at every first start (residual, not read further)"},
	},
	"gemini": {
		{".gemini/settings.json", Runs, "hooks (BeforeTool, ...), MCP servers, tool settings, the sign-in method"},
		{".gemini/.env", Obeys, "environment loaded at start"},
		{".gemini/trustedFolders.json", Obeys, "folder trust"},
		{".gemini/GEMINI.md", Obeys, "instructions"},
		{".gemini/AGENTS.md", Obeys, "instructions"},
		{".gemini/commands", Obeys, "custom commands"},
		{".gemini/extensions", Runs, "extensions, with MCP servers and hooks"},
		{".gemini/skills", Obeys, "skills"},
		{".gemini/agents", Obeys, "subagents"},
		{".gemini/policies", Obeys, "tool policies"},
		{".gemini/hooks", Runs, "hooks"},
		{".gemini/bin", Runs, "downloaded helpers it spawns: bin/litert/lit.<platform> (the Gemma router's server), no hash checked"},
		{".gemini/acknowledgments", Obeys, "acknowledged project agents (acknowledgments/agents.json)"},
		{".gemini/oauth_creds.json", Secrets, "sign-in"},
		{".gemini/google_accounts.json", Secrets, "sign-in"},
		{".gemini/mcp-oauth-tokens.json", Secrets, "MCP servers' tokens"},
		{".gemini/projects.json", Obeys, "project path to slug (ProjectRegistry.getShortId): cordon registers the project before the launch, so Gemini CLI reads it and writes nothing"},
		{".gemini/tmp", Obeys, "one directory per project slug (Storage.getProjectTempDir); a new one claims a slug, one named by a project path's hash is migrated into that project's (StorageMigration)"},
		{".gemini/tmp/*", Keeps, "this project's chats, logs, shell history, plans, checkpoints: writable for its own slug alone"},
		{".gemini/tmp/*/memory", Obeys, "project memory (Storage.getProjectMemoryTempDir), in the system instruction of every later session in that project: writable for its own slug alone"},
		{".gemini/tmp/*/.project_root", Obeys, "the slug's owner (ensureOwnershipMarkers): one naming another project takes that project's slug at its next start"},
		{".gemini/tmp/bin", Runs, "Storage.getGlobalBinDir (named, unused in 0.61.0)"},
		{".gemini/tmp/background-processes", Keeps, "background shell commands' logs (ShellExecutionService.getLogDir)"},
		{".gemini/history", Obeys, "checkpointing's shadow git repository per slug, with its own .project_root"},
		{".gemini/history/*", Keeps, "this project's checkpoints: writable for its own slug alone (residual: its git hooks run with checkpointing on, in that project)"},
		{".gemini/history/*/.project_root", Obeys, "the slug's owner, as in tmp/"},
		{".gemini/trusted_hooks.json", Obeys, "hooks the user trusted (TrustedHooksManager)"},
		{".gemini/policy_integrity.json", Obeys, "hashes of the policies the user accepted (PolicyIntegrityManager)"},
		{".gemini/keybindings.json", Obeys, "key bindings (Storage.getUserKeybindingsPath)"},
		{".gemini/a2a-oauth-tokens.json", Secrets, "remote agents' tokens (Storage.getA2AOAuthTokensPath)"},
		{".gemini/cli-browser-profile", Runs, "the browser agent's Chrome profile and consent flag (its extensions run in the next browser session)"},
		{".gemini/installation_id", Keeps, "an identifier"},
		{".gemini/user_id", Keeps, "an identifier"},
		{".gemini/state.json", Keeps, "UI state (tips, banners)"},
		{".gemini/*.tmp", Keeps, "the temporary files it renames over projects.json"},
		{".gemini/projects.json.lock", Keeps, "proper-lockfile's lock of projects.json"},
	},
	// Copilot CLI runs outside the wall only (no --agent preset): the
	// whole of ~/.copilot stays read-only inside (HomeAgentConfigs), and
	// this map says what a preset would have to keep so.
	"copilot": {
		{".copilot/config.json", Secrets, "sign-in, installed plugins and trusted folders; rewritten (a temporary file renamed over it) at every start"},
		{".copilot/settings.json", Runs, "user settings (runtime.node's user_settings_path): statusLine.command, a shell command; hooks; disabledHooks; enabled plugins and marketplaces"},
		{".copilot/settings.json.lock", Keeps, "the settings' write lock"},
		{".copilot/mcp-config.json", Runs, "MCP servers: their commands run at the next start"},
		{".copilot/mcp-installations.json", Runs, "MCP servers installed from a registry (runtime.node's installation_ownership)"},
		{".copilot/mcp-activations.json", Runs, "the MCP servers to start"},
		{".copilot/lsp-config.json", Runs, "language servers: programs it starts"},
		{".copilot/hooks", Runs, "hooks/*.json: hook commands"},
		{".copilot/installed-plugins", Runs, "plugins (user_settings_installed_plugins_dir): hooks, MCP servers, agents, skills"},
		{".copilot/pkg", Runs, "its own code per version when COPILOT_HOME is set (the npm loader's search list, beside ~/.cache/copilot/pkg)"},
		{".copilot/permissions-config.json", Obeys, "tools and paths allowed without asking"},
		{".copilot/copilot-instructions.md", Obeys, "user instructions"},
		{".copilot/agents", Obeys, "custom agents"},
		{".copilot/skills", Obeys, "skills"},
		{".copilot/ide", Obeys, "IDE lock files: the editor whose MCP server it connects to"},
		{".copilot/session-state", Keeps, "sessions (events.jsonl, workspace.yaml, checkpoints, rewind snapshots), resumed by --resume"},
		{".copilot/session-store.db", Keeps, "the sessions' index (with -wal and -shm)"},
		{".copilot/session-store.db-wal", Keeps, "SQLite write-ahead log"},
		{".copilot/session-store.db-shm", Keeps, "SQLite shared memory"},
		{".copilot/logs", Keeps, "logs"},
		{".copilot/command-history-state.json", Keeps, "prompt history"},
	},
}

// Residual are the rows of AgentHomes that stay writable although the
// agent obeys them later: the agent stops without writing them, and no
// backend can let it write its own entry alone yet (docs/agents.md says
// what the user does to see them).
var Residual = map[string]bool{
	".codex/.sandbox_migration": true,
}

// ClassifyHome is the class of p (under HOME, slash separated) in agent's
// map: the row that matches it or a parent of it, the longest first; 0
// when no row does.
func ClassifyHome(agent, p string) HomeClass {
	var best HomePath
	for _, r := range AgentHomes[agent] {
		if covers(r.Path, p) && len(r.Path) > len(best.Path) {
			best = r
		}
	}
	return best.Class
}

// covers reports whether pattern names p or a parent of p.
func covers(pattern, p string) bool {
	pn, n := strings.Count(pattern, "/"), strings.Split(p, "/")
	if len(n) <= pn {
		return false
	}
	ok, _ := path.Match(pattern, strings.Join(n[:pn+1], "/"))
	return ok
}

// homeReadonly are the paths of agent's map below dir ("" for all) that
// are not Keeps and have no "*": read-only inside dir, a writable state
// directory.
func homeReadonly(agent, dir string) []string {
	var ro []string
	for _, r := range AgentHomes[agent] {
		if r.Class != Keeps && !strings.Contains(r.Path, "*") && !Residual[r.Path] && (dir == "" || strings.HasPrefix(r.Path, dir+"/")) {
			ro = append(ro, r.Path)
		}
	}
	return ro
}
