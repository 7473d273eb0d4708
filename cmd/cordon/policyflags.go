package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// policyFlags are the POLICY flags shared by run, profile and explain
// (docs/design.md, the CLI contract). They parse into a workspace.Spec; paths
// must be absolute, except --workspace (see spec).
type policyFlags struct {
	files                                 []string
	deny, readonly, writable, baseWritabl []string
	restrict                              bool
	workspace                             string
	allowRead                             []string
	allowGitWrites                        bool
	agentsRoot, agent, parent             string
	writablePathDirs                      []string
	allowDomains, denyDomains             []string
	unixSockets                           []string
	// hostNetwork is run's --network on: --agent then adds no allowlist.
	hostNetwork bool
}

// appendPattern appends a network pattern to dst once it parses: a bad
// one is a bad flag value (exit 2), named as the flag's.
func appendPattern(dst *[]string) func(string) error {
	return func(s string) error {
		if _, err := netpolicy.Parse(s); err != nil {
			// checked says --FLAG "VALUE": and the reason.
			why, _ := strings.CutPrefix(err.Error(), fmt.Sprintf("%v %q: ", netpolicy.ErrPattern, s))
			return errors.New(why)
		}
		*dst = append(*dst, s)
		return nil
	}
}

// composeFailed reports an error of policyFlags.compose: a flag spelled
// wrong or missing its partner (workspace.SpecError) is bad usage, exit
// 2; anything else (a policy file, a path that cannot be resolved) is a
// cordon error, 125.
func composeFailed(e *env, err error) int {
	var se *workspace.SpecError
	if errors.As(err, &se) {
		return usageError(e, "%v", err)
	}
	return errorf(e, exitCordonError, "%v", err)
}

func (pf *policyFlags) register(fs *flag.FlagSet) {
	fs.Func("policy", "read a five-field policy from `FILE` (JSON); repeatable, the files merge in order", appendPath(&pf.files))
	fs.Func("deny", "deny reading and writing `PATH` (repeatable)", appendPath(&pf.deny))
	fs.Func("readonly", "make `PATH` read-only (repeatable)", appendPath(&pf.readonly))
	fs.Func("writable", "make `PATH` writable (repeatable)", appendPath(&pf.writable))
	fs.Func("base-writable", "grant writes under `PATH` (repeatable)", appendPath(&pf.baseWritabl))
	fs.BoolVar(&pf.restrict, "restrict-writes", false, "deny writes outside writable roots")
	pathVar(fs, &pf.workspace, "workspace", "", "preset: `DIR` writable, private TMPDIR, restrictWrites, auto-run files protected, credentials denied")
	fs.Func("allow-read", "with --workspace: leave credential store `PATH` readable (repeatable)", appendPath(&pf.allowRead))
	fs.BoolVar(&pf.allowGitWrites, "allow-git-writes", false, "with --workspace: let the sandbox git add/commit; git config, hooks, modules/ and info/ stay read-only")
	pathVar(fs, &pf.agentsRoot, "agents-root", "", "preset: deny `DIR` except the agent's own and its parent's directories")
	fs.StringVar(&pf.agent, "agent", "", "an agent CLI's preset `NAME` (claude-code, codex, gemini): its state writable, its API reachable; with --agents-root: this agent's ID (DIR/ID writable)")
	fs.StringVar(&pf.parent, "parent", "", "with --agents-root: the parent agent's `ID` (DIR/ID read-only)")
	fs.Func("writable-path-dir", "leave `DIR`, a directory on PATH, writable (repeatable)", appendPath(&pf.writablePathDirs))
	fs.Func("allow-domain", "let the sandbox reach `PATTERN` through cordon's proxy: host, *.host, either with :PORT (default 80 and 443), or a preset (@npm, @pypi, @go, @crates, @github, @anthropic, @openai, @gemini); repeatable", appendPattern(&pf.allowDomains))
	fs.Func("deny-domain", "refuse `PATTERN` even where an --allow-domain matches (without :PORT, every port); repeatable", appendPattern(&pf.denyDomains))
	fs.Func("allow-unix-socket", "let the sandbox connect to the host's Unix socket `PATH` (docker.sock, an ssh-agent's: it gets what the socket gives); repeatable", appendPath(&pf.unixSockets))
}

const policyHelp = `Policy (flags combine into one five-field policy; see 'cordon profile'):
  --policy FILE          JSON with baseWritableRoots, deniedRoots, readonlyRoots,
                         writableRoots, restrictWrites: each key spelled exactly
                         so and given once (unknown keys are errors); repeatable:
                         the files merge in order, like the flags below
  --deny P, --readonly P, --writable P, --base-writable P, --restrict-writes
  --workspace DIR        DIR writable, a private TMPDIR, writes elsewhere denied,
                         every git directory in DIR read-only (git status, diff
                         and log work; git add and commit do not), shell rc
                         files, .vscode, .claude, ... protected, credential
                         stores under HOME denied
  --allow-git-writes     with --workspace: let the sandbox git add and commit;
                         config, hooks, modules/, info/ stay read-only, but a
                         hostile sandbox can then still plant what your next
                         git command on the host obeys (docs/git.md)
  --allow-read P         with --workspace: keep credential store P readable
  --agents-root DIR --agent ID [--parent ID]
                         DIR denied, DIR/ID writable with a workspace's
                         protections, DIR/PARENT read-only
  --agent NAME           (without --agents-root) run agent CLI NAME inside: the
                         workspace preset (DIR defaults to the current
                         directory), its state under HOME writable (sessions,
                         logs, caches; never its settings, hooks, MCP servers
                         or credentials), its API hosts allowed (@anthropic,
                         @openai, @gemini; not with --network on). NAME:
                         claude-code, codex, gemini (docs/agents.md)
  --writable-path-dir DIR
                         leave DIR writable although it is on PATH (see below)
Network (off unless --network on, or an allowlist):
  --allow-domain PATTERN the sandbox reaches PATTERN through cordon's proxy and
                         nothing else: host, *.host (subdomains only), either
                         with :PORT (without one, 80 and 443), an IP literal,
                         or a preset: @npm @pypi @go @crates @github
                         @anthropic @openai @gemini
  --deny-domain PATTERN  refused even where an --allow-domain matches
  A policy file may hold {"network": {"allowDomains": [...], "denyDomains": [...]}}
  beside the five fields.
Unix sockets (the sandbox's own always work; no host socket does unless named):
  --allow-unix-socket PATH
                         the sandbox may connect to the host's socket PATH, the
                         socket found there at launch and no other; it gets what
                         the socket gives (docker.sock is root on the host, an
                         ssh-agent signs as you); a policy file's
                         "allowUnixSockets": [...] too
The most specific root decides each path; paths are resolved through symlinks.
What runs next on the host is read-only in every sandbox, wherever the policy
would let it write: cordon itself (the file it runs from and the path it was
invoked by), every directory on PATH (not relative entries; opt one out with
--writable-path-dir), and with HOME writable the agents' configurations there
(~/.claude.json, ~/.claude, ~/.codex, ~/.gemini, ~/.cursor, ~/go/bin, ...).
`

// empty reports whether no policy flag was given at all.
func (pf *policyFlags) empty() bool {
	return len(pf.files)+len(pf.deny)+len(pf.readonly)+len(pf.writable)+len(pf.baseWritabl) == 0 &&
		!pf.restrict && pf.workspace == "" && pf.agentsRoot == "" && pf.agent == ""
}

// writesWarning is what to say when comp leaves writes unrestricted,
// "" when it restricts them: with no policy at all, or with one (a
// policy file without restrictWrites) that denies and protects some
// paths but lets the command write everywhere else.
func (pf *policyFlags) writesWarning(comp *workspace.Composed) string {
	switch {
	case comp.Policy.RestrictWrites:
		return ""
	case pf.empty():
		return "no policy given, so the command may write anywhere you can; try --workspace DIR"
	}
	return "the policy leaves writes unrestricted (no restrictWrites), so the command may write anywhere you can outside its denied and read-only roots; add --restrict-writes or --workspace DIR"
}

// spec turns the flags into the composition's input, with what the
// environment adds: HOME, the launcher's PATH and cordon's own paths
// (exes). Nothing else happens here: workspace.Compose builds the policy.
func (pf *policyFlags) spec(getenv func(string) string, exes []string) (workspace.Spec, error) {
	s := workspace.Spec{
		Deny: pf.deny, Readonly: pf.readonly, Writable: pf.writable,
		BaseWritable: pf.baseWritabl, RestrictWrites: pf.restrict,
		AllowRead: pf.allowRead, AgentsRoot: pf.agentsRoot, Agent: pf.agent, Parent: pf.parent,
		Home: getenv("HOME"), ConfigHome: getenv("XDG_CONFIG_HOME"), DataHome: getenv("XDG_DATA_HOME"),
		ScanCache:   launcher.ScanCacheDir(),
		Executables: exes, Path: getenv("PATH"), WritablePathDirs: pf.writablePathDirs,
		GitWrites: pf.allowGitWrites, AllowDomains: pf.allowDomains, DenyDomains: pf.denyDomains,
		HostNetwork: pf.hostNetwork,
	}
	for _, p := range pf.unixSockets {
		// Made absolute as the flag is read, as --policy is.
		abs, err := filepath.Abs(p)
		if err != nil {
			return s, fmt.Errorf("--allow-unix-socket %q: %w", p, err)
		}
		s.UnixSockets = append(s.UnixSockets, abs)
	}
	if pf.agentsRoot == "" && pf.agent != "" {
		// --agent without --agents-root names an agent CLI.
		s.Agent, s.AgentCLI = "", pf.agent
	}
	for _, file := range pf.files {
		// Made absolute here, as the file is read: the composition
		// protects the files it read, and a relative name would be taken
		// from / there (the sandbox could rewrite the policy of the next
		// launch). "" stays "", for the composition to refuse.
		f := file
		if f != "" {
			var err error
			if f, err = filepath.Abs(file); err != nil {
				return s, fmt.Errorf("--policy %q: %w", file, err)
			}
		}
		s.Files = append(s.Files, f)
	}
	ws := pf.workspace
	if s.AgentCLI != "" && ws == "" {
		// An agent works in the directory it is started in.
		ws = "."
	}
	if ws != "" {
		// --workspace alone may be relative: "--workspace ." is the
		// common case, and 'cordon profile' shows what it became.
		dir, err := filepath.Abs(ws)
		if err != nil {
			return s, fmt.Errorf("--workspace %q: %w", ws, err)
		}
		s.Workspace = dir
	}
	return s, nil
}

// compose parses nothing more: it is workspace.Compose of the flags, in this
// process's environment, with protect (an audit log's files) kept out of
// the sandbox's reach.
func (pf *policyFlags) compose(protect []string) (*workspace.Composed, error) {
	s, err := pf.spec(os.Getenv, workspace.Executables())
	if err != nil {
		return nil, err
	}
	s.Protect = protect
	return workspace.Compose(s)
}

// printNotes tells the user what the presets saw in writable places and
// did not follow (a pointer out of the workspace, a derived root inside a
// denied one, a scan cut short): on stderr, one line each.
func printNotes(e *env, notes []string) {
	for i, n := range notes {
		if i == maxNotes && len(notes) > maxNotes+1 {
			// A workspace as wide as / makes notes by the thousand: the
			// first screen says what kind they are, the rest is counted.
			errorf(e, 0, "note: ... and %d more notes like these (cordon profile --json lists the policy they made)", len(notes)-maxNotes)
			return
		}
		errorf(e, 0, "note: %s", n)
	}
}

// maxNotes is how many notes a launch prints before it counts the rest.
const maxNotes = 20

// prepareAgent makes the state directories of --agent NAME under home,
// which the launch mounts writable and so must exist.
func (pf *policyFlags) prepareAgent(home string) error {
	if pf.agentsRoot != "" || pf.agent == "" || home == "" || !filepath.IsAbs(home) {
		return nil
	}
	a, err := workspace.LookupAgentCLI(pf.agent)
	if err != nil {
		return err
	}
	ws := pf.workspace
	if ws == "" {
		ws = "." // as spec: an agent works in the directory it is started in
	}
	ws, err = filepath.Abs(ws)
	if err != nil {
		return fmt.Errorf("--workspace %q: %w", pf.workspace, err)
	}
	return a.PrepareHome(home, ws)
}
