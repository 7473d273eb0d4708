package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// AgentCLI is what one agent CLI needs to work inside the sandbox
// (cordon run --agent NAME): the workspace preset, plus its state under
// HOME writable and its API hosts through the network allowlist. Nothing
// else under HOME becomes writable: the agent's settings, hooks, commands,
// skills, plugins, MCP configuration and credentials stay read-only, since
// they decide what the same agent runs on the host when the user starts it
// outside cordon later (docs/agents.md, "The agent inside the wall").
type AgentCLI struct {
	// Name is the --agent value.
	Name string
	// StateDirs are directories under HOME the agent writes as it works
	// (sessions, transcripts, caches, logs): writable, made (0700) when
	// missing, so that the sandbox has a mount point for each.
	StateDirs []string
	// StateFiles are files under HOME the agent rewrites in place; each is
	// writable where it exists (a missing one stays unwritable: HOME is).
	StateFiles []string
	// ProjectDirs, when set, are the directories under HOME the agent
	// writes for the project in workspace ws (resolved) and for no other:
	// writable, made (0700) when missing; readonly are paths in them that
	// stay read-only. What one project's entry holds is obeyed by later
	// sessions in that project alone.
	ProjectDirs func(home, ws string) (dirs, readonly []string)
	// Register, when set, records the project ws (resolved) in the
	// agent's own registry under home before the launch, as the agent
	// would at its start, so that the sandbox needs to write no registry
	// (Gemini CLI's projects.json).
	Register func(home, ws string) error
	// Protected are paths inside StateDirs that stay read-only, existing
	// or not (a missing one is kept from being made): an agent that keeps its
	// settings beside its databases, in one directory, gets that
	// directory writable but for these.
	Protected []string
	// Domains are network patterns (netpolicy presets) for its API.
	Domains []string
	// Env are variables set inside the sandbox, unless the caller set them.
	Env []string
	// Keys are the variables that carry the agent's own API key or sign-in
	// token: passed in although their names mark a secret (launcher.
	// WithholdSecrets), the one secret the agent needs.
	Keys []string
	// ShellPrefix is the variable that names a command the agent wraps
	// each of its shell commands (and hooks) in: cordon run sets it to
	// its own helper, which drops Keys before it runs the command
	// (launcher.AgentShellPrefix), so that the key the agent needs
	// reaches none of the commands it runs.
	ShellPrefix string
	// Command is the base name of the agent's executable, and KeyArgs,
	// for an agent without a ShellPrefix, the arguments that make it keep
	// its key from the commands it runs, given the user's settings under
	// home: cordon run puts them right after the executable's name when
	// the command it runs is the agent's.
	Command string
	KeyArgs func(home string, keys []string) []string
	// KeySetting is the setting of the user's own with which the agent
	// keeps its key from the commands it runs: cordon run names it when
	// it cannot put KeyArgs in (the agent started through a shell or
	// another program), or when the agent has none.
	KeySetting string
	// KeyKept reports whether the user's settings under home make
	// KeySetting (nil: it cannot tell).
	KeyKept func(home string, keys []string) bool
	// Credentials are its sign-in files under HOME (names as in
	// CredentialStores): readable by this agent, denied to every other.
	Credentials []string
}

// AgentCLIs are the agents cordon run --agent knows. What each needs was
// read from the published packages (docs/agents.md gives the versions).
var AgentCLIs = map[string]AgentCLI{
	"claude-code": {
		Name: "claude-code",
		StateDirs: []string{
			".claude/sessions", ".claude/todos", ".claude/statsig",
			".claude/debug", ".claude/plans", ".claude/paste-cache", ".claude/backups",
			".claude/telemetry", ".claude/cache", ".claude/file-history",
			".cache/claude-cli-nodejs",
		},
		StateFiles:  []string{".claude/history.jsonl"},
		ProjectDirs: claudeProjectDirs,
		Domains:     []string{"@anthropic"},
		// The sandbox has no updater's business: the binary it would
		// replace runs on the host next.
		Env:  []string{"DISABLE_AUTOUPDATER=1"},
		Keys: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		// Claude Code runs each Bash command and command hook as
		// "PREFIX 'COMMAND'". Not CLAUDE_CODE_SUBPROCESS_ENV_SCRUB, which
		// also forces the default permission mode and runs each command
		// in Claude Code's own bubblewrap, which cannot start inside this
		// sandbox (docs/threat-model.md, "Secrets in the environment").
		ShellPrefix: "CLAUDE_CODE_SHELL_PREFIX",
		Credentials: []string{".claude/.credentials.json"},
	},
	"codex": {
		Name: "codex",
		// Codex keeps SQLite databases (state, logs, threads, with their
		// -wal and -shm files) at the top of CODEX_HOME, so the directory
		// itself must be writable; what in it decides what Codex runs or
		// obeys stays read-only.
		StateDirs: []string{".codex"},
		// What in it Codex runs or obeys (AgentHomes): its settings,
		// instructions, skills and plugins; the shell snapshots it sources
		// before each command, the helper links it puts first on PATH
		// (tmp/arg0), the plugins it stages before moving them into
		// plugins/; its own executable as OpenAI's installer puts it
		// (packages/standalone/releases/<v>/bin/codex).
		Protected: homeReadonly("codex", ".codex"),
		Domains:   []string{"@openai"},
		// Codex reads OPENAI_API_KEY (and a provider's env_key), CODEX_API_KEY
		// for codex exec, CODEX_ACCESS_TOKEN for a ChatGPT sign-in.
		Keys:        []string{"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"},
		Command:     "codex",
		KeyArgs:     codexKeyArgs,
		KeySetting:  `exclude = ["OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"] under [shell_environment_policy] in ~/.codex/config.toml`,
		KeyKept:     codexKeyKept,
		Credentials: []string{".codex/auth.json"},
	},
	"gemini": {
		Name: "gemini",
		// Gemini CLI writes installation_id and projects.json (through a
		// temporary file it renames) at the top of ~/.gemini, and makes
		// its project's directory in history/ at every start, and stops
		// when it cannot: the directory is writable but for what decides
		// what Gemini CLI runs, trusts or obeys. history/ stays writable
		// (docs/agents.md: the limit this leaves with checkpointing on).
		// Its project's directories in tmp/ and history/ are the only
		// ones there it writes: cordon registers the project first.
		StateDirs:   []string{".gemini", ".gemini/tmp/background-processes"},
		ProjectDirs: geminiProjectDirs,
		Register:    geminiRegister,
		// What in it Gemini CLI runs or obeys (AgentHomes), the helpers
		// it downloads and spawns in bin/ among them.
		Protected:   homeReadonly("gemini", ".gemini"),
		Domains:     []string{"@gemini"},
		Keys:        []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		KeySetting:  `"security": {"environmentVariableRedaction": {"enabled": true}} in ~/.gemini/settings.json`,
		KeyKept:     geminiKeyKept,
		Credentials: []string{".gemini/oauth_creds.json", ".gemini/google_accounts.json", ".gemini/mcp-oauth-tokens.json", ".gemini/a2a-oauth-tokens.json"},
	},
}

// claudeConfig are the paths under HOME where Claude Code keeps what it
// runs or obeys (hooks, MCP servers, commands, instructions, credentials,
// the shell snapshots its Bash tool sources).
var claudeConfig = homeReadonly("claude-code", "")

// AgentConfigPaths are the paths under HOME, for every agent CLI cordon
// knows, that decide what the agent runs, trusts or obeys on the host.
// Compose keeps each read-only wherever a policy would let the sandbox
// write it: --writable ~/.claude must not hand over the hooks in it.
func AgentConfigPaths() []string {
	out := append([]string(nil), claudeConfig...)
	for _, n := range AgentCLINames() {
		out = append(out, AgentCLIs[n].Protected...)
	}
	return out
}

// AgentCLINames are the names AgentCLIs knows, sorted.
func AgentCLINames() []string {
	var n []string
	for k := range AgentCLIs {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// LookupAgentCLI returns the agent called name, or an error listing the
// known ones.
func LookupAgentCLI(name string) (AgentCLI, error) {
	a, ok := AgentCLIs[name]
	if !ok {
		return a, fmt.Errorf("--agent %q: no such agent; known: %s", name, strings.Join(AgentCLINames(), ", "))
	}
	return a, nil
}

// PrepareHome makes the agent's missing state directories under home
// (0700), its project's for the workspace ws among them: each needs to
// exist to become a writable root. It makes nothing else, and refuses to
// go through a symbolic link in home: the state directory the sandbox
// writes must be the one the policy names.
func (a AgentCLI) PrepareHome(home, ws string) error {
	if a.Register != nil {
		rws, err := filepath.EvalSymlinks(ws)
		if err != nil {
			return fmt.Errorf("--agent %s: %w", a.Name, err)
		}
		for _, d := range a.StateDirs {
			if err := mkdirNoLinks(home, filepath.Join(home, d)); err != nil {
				return fmt.Errorf("--agent %s: %w", a.Name, err)
			}
		}
		if err := a.Register(home, rws); err != nil {
			return fmt.Errorf("--agent %s: %w", a.Name, err)
		}
	}
	for _, d := range a.dirs(home, ws) {
		p := filepath.Join(home, d)
		if err := mkdirNoLinks(home, p); err != nil {
			return fmt.Errorf("--agent %s: %w", a.Name, err)
		}
	}
	return nil
}

// mkdirNoLinks makes dir and its missing parents below base, each 0700,
// refusing a symbolic link on the way.
func mkdirNoLinks(base, dir string) error {
	rel, err := filepath.Rel(base, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s: not under %s", dir, base)
	}
	cur := base
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: name the directory itself, or remove the link", cur)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s: not a directory", cur)
		case err == nil:
			continue
		case !os.IsNotExist(err):
			return err
		}
		if err := os.Mkdir(cur, 0o700); err != nil && !os.IsExist(err) {
			return fmt.Errorf("make %s: %w", cur, err)
		}
	}
	return nil
}

// protected are the agent's read-only paths inside its state directories,
// its project's for the workspace ws among them.
func (a AgentCLI) protected(home, ws string) []string {
	var ro []string
	for _, p := range append(slices.Clone(a.Protected), a.project(home, ws).readonly...) {
		ro = append(ro, filepath.Join(home, p))
	}
	return ro
}

type projectPaths struct{ dirs, readonly []string }

// project are the agent's project's paths for the workspace ws.
func (a AgentCLI) project(home, ws string) projectPaths {
	if a.ProjectDirs == nil || ws == "" {
		return projectPaths{}
	}
	if rw, err := filepath.EvalSymlinks(ws); err == nil {
		ws = rw // the agent keys its project by its working directory, as the kernel names it
	}
	d, ro := a.ProjectDirs(home, ws)
	return projectPaths{d, ro}
}

// dirs are the agent's state directories under HOME, its project's for
// the workspace ws among them.
func (a AgentCLI) dirs(home, ws string) []string {
	return append(slices.Clone(a.StateDirs), a.project(home, ws).dirs...)
}

// roots are the agent's writable roots under home: every state directory
// (its project's for the workspace ws among them) and every state file
// that exists.
func (a AgentCLI) roots(home, ws string) []string {
	var w []string
	for _, d := range a.dirs(home, ws) {
		w = append(w, filepath.Join(home, d)+"/") // a directory, made if missing
	}
	for _, f := range a.StateFiles {
		p := filepath.Join(home, f)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			w = append(w, p)
		}
	}
	return w
}
