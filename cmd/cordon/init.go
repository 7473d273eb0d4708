package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/agents/setup"
	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

var initCommand = &command{
	name: "init", summary: "install cordon's hook into an agent's settings (or --remove it)",
	usage: "AGENT [--project | --user] [--dry-run] [--sandbox-bash=false] [--allow-sandboxed] [--audit FILE] [--trust] [--json]\n--remove AGENT [--project | --user] [--dry-run] [--json]",
	help:  initHelp, minArgs: 1, maxArgs: 1, anyOrder: true,
	missing: "name the AGENT: " + strings.Join(setup.Agents(), ", "),
	setup: func(fs *flag.FlagSet) action {
		o := &initOpts{}
		fs.BoolVar(&o.project, "project", false, "the project's settings, in --dir (the default)")
		fs.BoolVar(&o.user, "user", false, "your settings under HOME, for every project")
		pathVar(fs, &o.dir, "dir", ".", "the project `DIR` (with --project), and the workspace the binary must be outside of")
		fs.BoolVar(&o.dryRun, "dry-run", false, "print the change as a unified diff and write nothing")
		fs.BoolVar(&o.remove, "remove", false, "take cordon's entries out instead (only entries whose every command is 'cordon hook')")
		fs.BoolVar(&o.hook.SandboxBash, "sandbox-bash", true, "the hook runs shell commands inside 'cordon run' (--sandbox-bash=false: decides only)")
		fs.BoolVar(&o.hook.AllowSandboxed, "allow-sandboxed", false, "the hook allows, without asking, a shell command that runs inside the sandbox and that no hard-deny rule refuses")
		pathVar(fs, &o.hook.Audit, "audit", "", "the hook's audit log `FILE` (default: cordon's own, 'cordon audit path')")
		fs.BoolVar(&o.trust, "trust", false, "codex: also trust the hook in your config.toml, as Codex's \"Trust all and continue\" would (else 'codex exec' skips it)")
		fs.BoolVar(&o.asJSON, "json", false, `print {"agent","path","scope","action","command","diff"} (action: written, removed — the file, which held only cordon's hook —, unchanged or dry-run)`)
		return o.run
	},
}

const initHelp = `Writes cordon's hook into AGENT's settings: claude-code, codex, gemini,
copilot or cursor. The hook runs this cordon, by its absolute path
(symlinks resolved), so the settings keep working whatever PATH the agent
has:

  /usr/local/bin/cordon hook AGENT --sandbox-bash [--allow-sandboxed] [--audit FILE]

  agent        --project (in --dir)          --user (HOME)
  claude-code  .claude/settings.json         ~/.claude/settings.json
  codex        .codex/hooks.json             $CODEX_HOME/hooks.json (~/.codex)
  gemini       .gemini/settings.json         ~/.gemini/settings.json
  copilot      .github/hooks/cordon.json     $COPILOT_HOME/hooks/cordon.json (~/.copilot)
  cursor       .cursor/hooks.json            ~/.cursor/hooks.json

What it promises:
  - idempotent: a second run changes nothing, and says so;
  - every other setting, hook and comment stays byte for byte; cordon's
    entry goes after the others, in the file's indentation;
  - a file it cannot parse (or with a key given twice) is refused, named,
    and left untouched;
  - the file is replaced whole (a temporary file renamed over it), keeping
    its mode: never half-written; a symlinked settings file stays a link;
  - --remove takes out only cordon's entries: after init on a file with
    other content, --remove gives that file back as it was;
  - a project's settings file (or directory) that is a symlink leading out
    of the project is refused: a cloned project must not steer the write.

It refuses a cordon binary inside the project it configures, or anywhere
'cordon run --workspace DIR' would let a sandbox write: the agent (or a
command it runs) could replace the program that decides its next call.
Install cordon somewhere the agents cannot write (/usr/local/bin, or
~/.local/bin when HOME is not a workspace) and run that one.

--allow-sandboxed (off unless you ask): a shell command that runs inside
the sandbox and that no hard-deny rule refuses is allowed without a
prompt, as Claude Code's own sandbox does for its Bash. Without it every
shell command asks, and a headless session (claude -p, codex exec, CI)
turns each ask into a refusal: it can run no shell command at all. What
you give up: you no longer review each command before it runs. The kernel
still holds: no write outside the workspace or to its protected files
(.git/hooks, .claude, ...), no read of credential stores, no network. But
inside the workspace a command may change or delete any file without
asking, including edits the agent's Write and Edit tools would have asked
about. It stays off by default because it trades your review of every
change for fewer prompts; turn it on for unattended runs.

--trust (codex only): Codex 0.171 runs a user's or project's hook only
once the user trusted it, and 'codex exec' runs every call without an
untrusted one. --trust appends to your config.toml ($CODEX_HOME, else
~/.codex) what Codex writes when you choose "Trust all and continue": a
[hooks.state."<hooks.json>:pre_tool_use:0:0"] table with the hook's
trusted_hash, one per cordon hook; every other byte stays, and the file is
replaced whole; a trust of the hook init wrote before (with other flags)
moves to the new one. It refuses a config.toml it cannot parse or extend,
and any other state you set for the hook (decide that in codex's /hooks).
'cordon doctor' checks the trust as Codex computes it.

Run init on the host, as yourself: inside a cordon sandbox the agents'
settings directories are read-only.

Examples:
  cordon init claude-code                  this project, shell commands sandboxed
  cordon init claude-code --dry-run        show the diff, write nothing
  cordon init codex --user --allow-sandboxed --trust
  cordon init --remove gemini --user

Exit status: 0 done (or nothing to do), 1 refused (a file it cannot parse,
a cordon inside a workspace), 2 bad usage, 125 a file could not be written.
`

// initOpts are init's flags.
type initOpts struct {
	project, user, dryRun, remove, asJSON, trust bool
	dir                                          string
	hook                                         setup.Hook
}

// executable is the running cordon, for the hook to name (tests replace it).
var executable = os.Executable

func (o *initOpts) run(_ context.Context, e *env, args []string) int {
	a, err := setup.Lookup(args[0])
	if err != nil {
		return usageError(e, "%v", err)
	}
	if o.project && o.user {
		return usageError(e, "--project and --user contradict each other: pick one")
	}
	if o.trust && (a.Name != "codex" || o.remove) {
		return usageError(e, "--trust is for installing codex's hook: only Codex keeps a trust decision cordon can write")
	}
	scope := setup.Project
	if o.user {
		scope = setup.User
	}
	dir, err := realDir(o.dir)
	if err != nil {
		return errorf(e, exitFail, "--dir: %v", err)
	}
	home := os.Getenv("HOME")
	if scope == setup.User && !filepath.IsAbs(home) {
		return errorf(e, exitFail, "--user: HOME is not an absolute path (%q)", home)
	}
	path := a.SettingsPath(scope, home, dir, os.Getenv)
	// A project's settings may come with the project: a link in it must
	// not steer cordon's write (or --remove's) to a file elsewhere, such
	// as the user's own settings. Checked first, as the reason that names
	// the file to be written.
	if scope == setup.Project {
		if real := resolved(path); !within(real, dir) {
			return errorf(e, exitFail, "refusing to write %s: it leads to %s, outside the project %s", path, real, dir)
		}
	}

	var c *setup.Change
	if o.remove {
		c, err = setup.Remove(a, path)
	} else {
		if code, ok := o.prepareHook(e, dir, home); !ok {
			return code
		}
		c, err = setup.Install(a, path, o.hook)
	}
	var pe *setup.ParseError
	switch {
	case errors.As(err, &pe):
		return errorf(e, exitFail, "%v", err)
	case err != nil:
		return errorf(e, exitCordonError, "%v", err)
	}
	if scope == setup.Project {
		// A project's settings may come with the project: a link in it
		// must not steer cordon's write to a file elsewhere.
		if real := resolved(c.Target); !within(real, dir) {
			return errorf(e, exitFail, "refusing to write %s: it leads to %s, outside the project %s", path, real, dir)
		}
	}
	for _, m := range c.Mixed {
		errorf(e, 0, "note: %s holds %q in an entry with other hooks; cordon leaves that entry alone", path, m)
	}
	// Another settings layer (a project's local file, the user's) can
	// switch off every hook, cordon's too.
	if why := setup.HooksOff(a, home, dir, os.Getenv); why != "" && !o.remove {
		errorf(e, 0, "warning: %s: %s runs no hook, cordon's neither, until that is removed", why, a.Title)
	}
	trust, code := o.prepareTrust(e, path, c.New, home)
	if code != exitOK {
		return code
	}
	if code := o.write(e, a, c, path, scope); code != exitOK || trust == nil {
		return code
	}
	return o.writeTrust(e, trust)
}

// prepareTrust is, with --trust, the change that trusts the hooks in
// hooks (the hooks.json at path as init leaves it) in Codex's config.toml,
// computed before anything is written so that a refusal writes nothing.
// Codex keeps the user's trust in the user's config.toml, for a project's
// hook too: a project's own file must not trust its hooks.
func (o *initOpts) prepareTrust(e *env, path string, hooks []byte, home string) (*setup.Change, int) {
	if !o.trust {
		return nil, exitOK
	}
	cfg := setup.CodexConfigs(home, "", os.Getenv)
	if len(cfg) == 0 {
		return nil, errorf(e, exitFail, "--trust: neither CODEX_HOME nor HOME is an absolute path")
	}
	c, err := setup.CodexTrust(path, hooks, cfg[0])
	if err != nil {
		return nil, errorf(e, exitFail, "--trust: %v", err)
	}
	return c, exitOK
}

// writeTrust applies (or, with --dry-run, shows) the trust --trust adds
// to Codex's config.toml, after the hook it trusts is written.
func (o *initOpts) writeTrust(e *env, c *setup.Change) int {
	switch {
	case !c.Changed():
		if !o.asJSON {
			fmt.Fprintf(e.stdout, "%s: Codex trusts cordon's hook already\n", shown.String(c.Path))
		}
	case o.dryRun:
		if !o.asJSON {
			fmt.Fprint(e.stdout, shownLines(c.Diff()))
			fmt.Fprintln(e.stdout, "(--dry-run: nothing written)")
		}
	default:
		if err := c.Apply(true); err != nil {
			return errorf(e, exitCordonError, "%v", err)
		}
		if !o.asJSON {
			fmt.Fprintf(e.stdout, "wrote %s: Codex trusts cordon's hook, as its \"Trust all and continue\" would\n", shown.String(c.Path))
		}
	}
	return exitOK
}

// prepareHook completes the hook to install: the running cordon, which
// must lie outside every workspace, and the audit log's absolute path. It
// reports false, with the exit code, when either is refused.
func (o *initOpts) prepareHook(e *env, dir, home string) (int, bool) {
	var err error
	if o.hook.Cordon, err = thisCordon(); err != nil {
		return errorf(e, exitCordonError, "%v", err), false
	}
	if why := insideWorkspace(o.hook.Cordon, dir, home); why != "" {
		return errorf(e, exitFail, "refusing to install %s: %s; install cordon outside every workspace (e.g. /usr/local/bin) and run 'cordon init' with that one", o.hook.Cordon, why), false
	}
	if o.hook.Audit != "" {
		if o.hook.Audit, err = filepath.Abs(o.hook.Audit); err != nil {
			return errorf(e, exitFail, "--audit: %v", err), false
		}
		// The hook makes no directory for a log it is named, and
		// blocks every call until the directory exists.
		if fi, err := os.Stat(filepath.Dir(o.hook.Audit)); err != nil || !fi.IsDir() {
			return errorf(e, exitFail, "--audit %s: its directory does not exist (mkdir -p %s)", o.hook.Audit, filepath.Dir(o.hook.Audit)), false
		}
	}
	return exitOK, true
}

// write applies change c to the settings file at path (or shows it, with
// --dry-run) and tells the user what changed.
func (o *initOpts) write(e *env, a *setup.Agent, c *setup.Change, path string, scope setup.Scope) int {
	if o.asJSON {
		return o.writeJSON(e, a, c, path, scope)
	}
	if !c.Changed() {
		if o.remove {
			fmt.Fprintf(e.stdout, "%s: no cordon entry; nothing to remove\n", shown.String(path))
		} else {
			fmt.Fprintf(e.stdout, "%s: %s's hook is already set up; nothing changed\n", shown.String(path), a.Title)
		}
		return exitOK
	}
	if o.dryRun {
		fmt.Fprint(e.stdout, shownLines(c.Diff())) // the settings file is the repository's
		fmt.Fprintln(e.stdout, "(--dry-run: nothing written)")
		return exitOK
	}
	if err := c.Apply(scope == setup.User); err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	if o.remove {
		if c.Remove {
			fmt.Fprintf(e.stdout, "removed %s (it held only cordon's hook)\n", shown.String(path))
		} else {
			fmt.Fprintf(e.stdout, "took cordon's hook out of %s\n", shown.String(path))
		}
		return exitOK
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s runs '%s'\n", shown.String(path), a.Title, shown.String(o.hook.Command(a.Name)))
	fmt.Fprintf(e.stdout, "%s\n", a.Notes)
	if !o.hook.AllowSandboxed {
		fmt.Fprintf(e.stdout, "Every shell command asks first; a headless session (claude -p, codex exec) refuses them all.\n"+
			"For fewer prompts: 'cordon init %s%s --allow-sandboxed' allows a command the sandbox confines and no hard-deny\n"+
			"rule refuses; you then no longer review each command, and one may change any file in the workspace\n"+
			"(see 'cordon init --help').\n", a.Name, scopeFlag(scope))
	}
	fmt.Fprintln(e.stdout, "Check the machine with 'cordon doctor'.")
	return exitOK
}

// initJSON is what init --json prints: which file, what was done to it
// (or, with --dry-run, would be: the diff), and the hook's command.
type initJSON struct {
	Agent   string `json:"agent"`
	Path    string `json:"path"`
	Scope   string `json:"scope"`  // project or user
	Action  string `json:"action"` // written, removed (the file, which held only cordon's hook), unchanged, dry-run
	Remove  bool   `json:"remove"`
	Command string `json:"command,omitempty"` // the hook's, when installing
	Diff    string `json:"diff,omitempty"`    // the change, for dry-run
}

func (o *initOpts) writeJSON(e *env, a *setup.Agent, c *setup.Change, path string, scope setup.Scope) int {
	v := initJSON{Agent: a.Name, Path: path, Scope: "project", Remove: o.remove}
	if scope == setup.User {
		v.Scope = "user"
	}
	if !o.remove {
		v.Command = o.hook.Command(a.Name)
	}
	switch {
	case !c.Changed():
		v.Action = "unchanged"
	case o.dryRun:
		v.Action, v.Diff = "dry-run", c.Diff()
	default:
		if err := c.Apply(scope == setup.User); err != nil {
			return errorf(e, exitCordonError, "%v", err)
		}
		v.Action = "written" // with --remove: cordon's entries taken out
		if c.Remove {
			v.Action = "removed" // the file held only cordon's hook
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return errorf(e, exitCordonError, "encode json: %v", err)
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	return exitOK
}

func scopeFlag(s setup.Scope) string {
	if s == setup.User {
		return " --user"
	}
	return ""
}

// realDir is dir made absolute, symlinks resolved; it must be a directory.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// thisCordon is the running cordon's absolute path, symlinks resolved.
func thisCordon() (string, error) {
	exe, err := executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("find the cordon binary that runs: %w", err)
	}
	return exe, nil
}

// insideWorkspace says why exe must not be the hook's binary when dir is
// the workspace: it is inside dir, or the policy 'cordon run --workspace
// DIR' launches would let a sandbox write it (before cordon's own
// protection of the binary, which a launch from another copy would not
// give). "" when neither.
func insideWorkspace(exe, dir, home string) string {
	// The project is dir, and the work tree above it when dir is a
	// subdirectory of one: an agent started there writes the whole tree.
	for _, ws := range []string{dir, workTree(dir)} {
		if ws != "" && within(exe, ws) {
			return fmt.Sprintf("it is inside the workspace %s", ws)
		}
	}
	// The scan for nested repositories reuses cordon's cache when there
	// is one; doctor makes no directory.
	cache := filepath.Join(state.Path(), state.Scan)
	if fi, err := os.Stat(cache); err != nil || !fi.IsDir() {
		cache = ""
	}
	comp, err := workspace.Compose(workspace.Spec{Workspace: dir, Home: home, ScanCache: cache})
	if err != nil {
		return fmt.Sprintf("cannot tell whether a sandbox in %s could write it: %v", dir, err)
	}
	if comp.Canonical.Access(exe, policy.Write) {
		return fmt.Sprintf("a sandbox with --workspace %s could write it", dir)
	}
	if comp.Canonical.Access(filepath.Dir(exe), policy.Write) {
		return fmt.Sprintf("a sandbox with --workspace %s could write its directory", dir)
	}
	return ""
}

// workTree is the nearest directory above dir (or dir) holding .git, ""
// when there is none.
func workTree(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// resolved is path with symlinks resolved as far as it exists: its
// deepest existing ancestor resolved, the rest joined on.
func resolved(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
