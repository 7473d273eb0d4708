package workspace

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/internal/toolcache"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
)

// Spec is a policy in the terms of cordon's POLICY flags, one field per
// flag. Compose turns it into the policy a launch runs. It is the one
// place where flags and presets become a policy: 'cordon run', 'cordon
// profile', 'cordon explain', the conformance suite's executors and Go
// callers all compose through it, so they cannot drift apart.
//
// Paths must be absolute (Compose never resolves against the working
// directory). Errors name the flag of the field at fault.
type Spec struct {
	// Files are JSON policy files (--policy, repeatable), merged in order
	// as the root flags are: their roots add up, restrictWrites holds if
	// any file asks, network patterns add up. Where the policy would let
	// the sandbox write one, it becomes read-only: it decides later
	// launches too.
	Files []string
	// Deny, Readonly, Writable and BaseWritable add roots of that kind
	// (--deny, --readonly, --writable, --base-writable).
	Deny, Readonly, Writable, BaseWritable []string
	// RestrictWrites denies writes outside writable roots (--restrict-writes).
	RestrictWrites bool

	// Workspace is the workspace preset's directory (--workspace): see
	// Preset. Every other writable root gets the same protections.
	Workspace string
	// AllowRead leaves these credential stores readable (--allow-read);
	// it needs Workspace.
	AllowRead []string
	// GitWrites lets the sandbox write git metadata (--allow-git-writes;
	// it needs Workspace): see Options.GitWrites.
	GitWrites bool

	// AgentsRoot, Agent and Parent are the agents preset (--agents-root,
	// --agent, --parent): see Agents. The agent's directory gets the
	// protections of a workspace.
	AgentsRoot, Agent, Parent string

	// AgentCLI is an agent CLI's preset (--agent NAME without
	// --agents-root; see AgentCLI): its state under HOME writable, its API
	// hosts allowed unless HostNetwork. It needs Workspace.
	AgentCLI string
	// HostNetwork is --network on: the sandbox has the host's network, so
	// AgentCLI adds no allowlist.
	HostNetwork bool

	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// UserHome is the home the password database names (Options.UserHome);
	// "" looks it up.
	UserHome string
	// ConfigHome and DataHome are the user's XDG_CONFIG_HOME and
	// XDG_DATA_HOME (Options.ConfigHome); "" means this
	// process's.
	ConfigHome, DataHome string
	// Environ is the caller's environment ("KEY=VAL"; nil is this
	// process's): where it places the host's package and build caches
	// (hostCaches), which stay read-only in the sandbox.
	Environ []string
	// ScanCache is where the scan for nested git repositories may keep
	// its result (Options.ScanCache); "" scans every time.
	ScanCache string

	// Executables are the programs that run the sandbox and that the user
	// runs next, cordon itself (see Executables): read-only in every
	// sandbox, wherever the policy would let it write them.
	Executables []string
	// Path is the launcher's PATH (colon-separated): every directory on
	// it that the policy would let the sandbox write becomes read-only,
	// so nothing planted there runs on the host under a familiar name.
	Path string
	// WritablePathDirs are PATH directories to leave writable
	// (--writable-path-dir).
	WritablePathDirs []string
	// AllowDomains and DenyDomains are the network allowlist
	// (--allow-domain, --deny-domain; netpolicy patterns), added to the
	// policy file's "network" object.
	AllowDomains, DenyDomains []string
	// UnixSockets are host Unix sockets to hand over
	// (--allow-unix-socket), added to the policy files'
	// "allowUnixSockets".
	UnixSockets []string

	// Protect are files the launch must keep out of the sandbox's reach,
	// such as an audit log and its anchor (--audit): read-only wherever
	// the policy would let the sandbox write them.
	Protect []string
}

// Composed is a policy ready to launch: resolved once, with what the
// launch needs besides the five fields.
type Composed struct {
	// Policy is the canonical policy (each root resolved, sorted).
	Policy policy.FsSandboxPolicy
	// Canonical is Policy as the model, with each root's identity as it
	// was resolved (Canonical.IDs): the launcher refuses to launch if a
	// root changed identity since (see launcher.Cmd.IDs).
	Canonical *policy.Canonical
	// TmpDir is the workspace's private TMPDIR ("" without a workspace).
	TmpDir string
	// CacheDir is the workspace's private cache ("" without a
	// workspace): see PrivateCacheDir and launcher.Cmd.CacheDir.
	CacheDir string
	// Workspace is the canonical workspace directory ("" without one);
	// it differs from Spec.Workspace when that was given through a
	// symlink.
	Workspace string
	// Network is the network allowlist, nil when none was given (the
	// network is then off or on, as the launch says).
	Network *netpolicy.Policy
	// UnixSockets are the host Unix sockets the sandbox may connect to,
	// each resolved and checked to be a socket (launcher.Cmd.UnixSockets).
	UnixSockets []policy.HostSocket
	// PassEnv are variables to pass in although their names mark a secret
	// (launcher.WithholdSecrets): those the policy files name ("env") and
	// the agent CLI's own keys (AgentCLI.Keys).
	PassEnv []string
	// SetEnv are variables ("KEY=VAL") the agent CLI's preset sets inside
	// unless the caller sets them (AgentCLI.Env).
	SetEnv []string
	// AgentKeys are the agent CLI's own keys (AgentCLI.Keys), and
	// ShellPrefix the variable through which they are kept from the
	// commands it runs (AgentCLI.ShellPrefix; "" when it has none).
	AgentKeys   []string
	ShellPrefix string
	// AgentName and KeySetting are the agent CLI's name and its
	// AgentCLI.KeySetting, "" when the user's settings make it already
	// (AgentCLI.KeyKept).
	AgentName, KeySetting string
	// AgentCommand and KeyArgs are the agent CLI's AgentCLI.Command and
	// the arguments its KeyArgs gives for the user's settings (none when
	// they keep the key already).
	AgentCommand string
	KeyArgs      []string
}

// HomeAgentConfigs are files and directories under HOME whose contents
// AI agents and editors run or obey (MCP servers, hooks, tasks). With
// HOME writable they are protected like ShellFiles: a sandbox that could
// write them would run code on the host at the agent's next start.
var HomeAgentConfigs = []string{
	".claude.json", ".claude", ".codex", ".gemini", ".cursor", ".continue",
	".aider.conf.yml", ".copilot", ".codeium", ".windsurf",
	".config/Code/User", ".config/Cursor/User", ".config/github-copilot",
	".config/opencode", ".config/goose", ".config/zed",
	// where 'go install' and 'cargo install' put programs the user runs
	"go/bin", ".cargo/bin",
	// GitHub Copilot CLI unpacks its own code here at its first start and
	// runs it from here at every later one (seen with 1.0.102: a line
	// added to .cache/copilot/pkg/linux-x64/1.0.102/index.js ran at the
	// next 'copilot help')
	".cache/copilot",
	// Cursor's CLI, installed by its script from cursor.com (not on npm,
	// so not read here): its versions, which ~/.local/bin/cursor-agent
	// points at (docs/agents.md, "The agent's home, mapped")
	".local/share/cursor-agent",
}

// loadFiles merges the policy files, in order, and gathers the domains
// and environment names they give.
func loadFiles(files []string) (p policy.FsSandboxPolicy, allow, deny, passEnv, sockets []string, err error) {
	for _, file := range files {
		f, err := policy.LoadFile(file)
		if err != nil {
			return p, nil, nil, nil, nil, err
		}
		p.Merge(f.FsSandboxPolicy)
		passEnv = append(passEnv, f.Env...)
		sockets = append(sockets, f.AllowUnixSockets...)
		if f.Network != nil {
			allow = append(allow, f.Network.AllowDomains...)
			deny = append(deny, f.Network.DenyDomains...)
		}
	}
	return p, allow, deny, passEnv, sockets, nil
}

// networkOf is the network allowlist of the domains allowed and denied,
// nil when none is named.
func networkOf(allow, deny []string) (*netpolicy.Policy, error) {
	if len(allow)+len(deny) == 0 {
		return nil, nil
	}
	network, err := netpolicy.New(allow, deny)
	if err != nil {
		return nil, err
	}
	if len(network.Allow) == 0 {
		return nil, fmt.Errorf("--deny-domain without --allow-domain: nothing is allowed to deny from (the network is off unless a pattern allows a host)")
	}
	return network, nil
}

// Compose builds the policy of s. The steps, in order: the policy files,
// the root flags, the workspace preset, the agents preset, the
// workspace's protections on every other writable root (and on the
// agent's directory), and last the protections of what runs next
// (Executables, Path, HomeAgentConfigs) and of Protect, which only ever restrict: each
// becomes a read-only root only where the policy would allow writing it.
func Compose(s Spec) (*Composed, error) {
	if err := s.check(); err != nil {
		return nil, &SpecError{err}
	}
	p, allow, deny, passEnv, sockets, err := loadFiles(s.Files)
	if err != nil {
		return nil, err
	}
	hosts, err := hostSockets(append(sockets, s.UnixSockets...))
	if err != nil {
		return nil, err
	}
	allow = append(allow, s.AllowDomains...)
	deny = append(deny, s.DenyDomains...)
	var agent AgentCLI
	if s.AgentCLI != "" {
		if agent, err = LookupAgentCLI(s.AgentCLI); err != nil {
			return nil, err
		}
		if !s.HostNetwork {
			allow = append(allow, agent.Domains...)
		}
		passEnv = append(passEnv, agent.Keys...)
	}
	network, err := networkOf(allow, deny)
	if err != nil {
		return nil, err
	}
	// The writable roots named by the caller, before any preset adds its
	// own: each gets the workspace's protections.
	extra := append(append(append([]string(nil), p.WritableRoots...), p.BaseWritableRoots...), s.Writable...)
	extra = append(extra, s.BaseWritable...)
	p.Merge(policy.FsSandboxPolicy{
		DeniedRoots:       s.Deny,
		ReadonlyRoots:     s.Readonly,
		WritableRoots:     s.Writable,
		BaseWritableRoots: s.BaseWritable,
		RestrictWrites:    s.RestrictWrites,
	})
	r := policy.NewResolver()
	defer r.Close()
	home := s.home(r)
	out := &Composed{Network: network, UnixSockets: hosts, PassEnv: passEnv, SetEnv: agent.Env, AgentKeys: agent.Keys, ShellPrefix: agent.ShellPrefix,
		AgentName: agent.Name, KeySetting: agent.KeySetting}
	var protect []string // writable roots that get a workspace's protections
	if s.Workspace != "" {
		ws, err := preset(r, s.Workspace, Options{Home: home, UserHome: s.UserHome, OwnCredentials: agent.Credentials, AllowRead: s.AllowRead, ScanCache: s.ScanCache, GitWrites: s.GitWrites, ConfigHome: s.ConfigHome, DataHome: s.DataHome})
		if err != nil {
			return nil, fmt.Errorf("--workspace %q: %w", s.Workspace, err)
		}
		p.Merge(ws)
		out.Workspace = ws.WritableRoots[0] // the resolved DIR
		out.TmpDir = PrivateTmpDir(out.Workspace)
		out.CacheDir = PrivateCacheDir(out.Workspace)
		protect = extra
	}
	switch {
	case agent.KeyKept != nil && home != "" && agent.KeyKept(home, agent.Keys):
		out.KeySetting = ""
	case agent.KeyArgs != nil:
		out.AgentCommand, out.KeyArgs = agent.Command, agent.KeyArgs(home, agent.Keys)
	}
	if s.AgentCLI != "" && home != "" {
		// After the workspace preset, so that no protection of the
		// workspace's is in the way; the state directories get none of a
		// workspace's own (they hold no repository and nothing that runs).
		p.Merge(policy.FsSandboxPolicy{WritableRoots: agent.roots(home, out.Workspace)})
		p.Protect(agent.protected(home, out.Workspace)...)
	}
	if s.AgentsRoot != "" {
		ag, err := Agents(s.AgentsRoot, s.Agent, s.Parent)
		if err != nil {
			return nil, fmt.Errorf("--agents-root %q: %w", s.AgentsRoot, err)
		}
		p.Merge(ag)
		// An agent's own directory is its workspace: its .git/hooks,
		// .git/config, .vscode, ... run on the host like a workspace's.
		if !testhook.SkipAgentProtections {
			protect = append(protect, ag.WritableRoots...)
		}
	}
	if err := s.protectRoots(r, &p, protect, home); err != nil {
		return nil, err
	}
	// One resolver from the first lookup to the canonical policy: every
	// path is looked up once, so the policy rests on one view of the host
	// even while a sandbox swaps directories for symlinks (the launcher
	// then checks it still holds, see Canonical.CheckIDs).
	c, err := r.Canonicalize(p)
	if err != nil {
		return nil, err
	}
	if more := s.runsNext(r, c, home); len(more) > 0 {
		p.ReadonlyRoots = append(p.ReadonlyRoots, more...)
		if c, err = r.Canonicalize(p); err != nil {
			return nil, err
		}
	}
	if c, err = socketRoots(r, p, c, out.UnixSockets); err != nil {
		return nil, err
	}
	if err := s.checkPolicyLinks(r, c); err != nil {
		return nil, err
	}
	c.AddNotes(s.offPath(r)...)
	out.Canonical = c
	out.Policy = c.Policy()
	return out, nil
}

// protectRoots merges into p a workspace's protections for each of the
// writable roots in protect.
func (s Spec) protectRoots(r *policy.Resolver, p *policy.FsSandboxPolicy, protect []string, home string) error {
	for _, w := range protect {
		rw, err := r.Resolve(w)
		if err != nil {
			return fmt.Errorf("writable root %q: %w", w, err)
		}
		prot, err := protections(r, rw, home, Options{ScanCache: s.ScanCache, GitWrites: s.GitWrites, ConfigHome: s.ConfigHome, DataHome: s.DataHome})
		if err != nil {
			return fmt.Errorf("writable root %q: %w", w, err)
		}
		p.Merge(prot)
	}
	return nil
}

// A SpecError is a Spec spelled wrong before anything was looked up: a
// path that is not absolute, a field that needs another (--allow-read
// without --workspace). For a command line it is bad usage.
type SpecError struct{ Err error }

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// check validates the spelling of s before anything is looked up.
func (s *Spec) check() error {
	for _, l := range []struct {
		flag  string
		paths []string
	}{{"--deny", s.Deny}, {"--readonly", s.Readonly}, {"--writable", s.Writable},
		{"--base-writable", s.BaseWritable}, {"--allow-read", s.AllowRead},
		{"--writable-path-dir", s.WritablePathDirs}} {
		for _, path := range l.paths {
			if path == "" || !filepath.IsAbs(path) {
				return fmt.Errorf("%s %q: give an absolute path", l.flag, path)
			}
		}
	}
	for _, f := range s.Files {
		if !filepath.IsAbs(f) {
			// The file read is the file kept read-only: both by this name.
			return fmt.Errorf("--policy %q: give an absolute path", f)
		}
	}
	if s.Workspace != "" && !filepath.IsAbs(s.Workspace) {
		return fmt.Errorf("--workspace %q: give an absolute path", s.Workspace)
	}
	if len(s.AllowRead) > 0 && s.Workspace == "" {
		return fmt.Errorf("--allow-read needs --workspace")
	}
	if s.GitWrites && s.Workspace == "" {
		return fmt.Errorf("--allow-git-writes needs --workspace")
	}
	if s.AgentCLI != "" && s.Workspace == "" {
		return fmt.Errorf("--agent %s needs --workspace", s.AgentCLI)
	}
	if s.AgentCLI != "" && s.AgentsRoot != "" {
		return fmt.Errorf("--agent %s names an agent CLI's preset, which --agents-root does not take", s.AgentCLI)
	}
	if s.AgentsRoot == "" && (s.Agent != "" || s.Parent != "") {
		return fmt.Errorf("--agent and --parent need --agents-root")
	}
	return nil
}

// home is the canonical home directory, "" when there is none.
func (s *Spec) home(r *policy.Resolver) string {
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	h, err := r.Resolve(home)
	if err != nil {
		return ""
	}
	return h
}

// runsNext lists the read-only roots that keep what runs next on the host
// out of the sandbox's reach (docs/threat-model.md, "what runs next"):
// the executables, the PATH directories, the policy files (they decide
// the next launch) and, when HOME is writable, the agents' configurations
// there. Only paths c would let the sandbox write
// are listed, and none that is already a root: a root the caller named
// says what the caller wants there, and a denied path stays denied.
func (s *Spec) runsNext(r *policy.Resolver, c *policy.Canonical, home string) []string {
	cand := append(s.namedExecutables(), s.pathDirs(r)...)
	if !testhook.SkipProtectPolicyFile {
		// A policy file decides the next launch too: one kept in the
		// workspace must not be the sandbox's to rewrite.
		cand = append(cand, s.Files...)
	}
	if home != "" && c.Access(home, policy.Write) && !testhook.SkipProtectHomeAgents {
		for _, n := range HomeAgentConfigs {
			cand = append(cand, filepath.Join(home, n))
		}
	}
	if home != "" && !testhook.SkipProtectHostCaches {
		cand = append(cand, hostCaches(s.Environ, home)...)
	}
	if home != "" && !testhook.SkipProtectHomeAgents {
		// A directory of an agent's named writable (--writable
		// ~/.claude) leaves its settings and hooks in it writable unless
		// they are protected one by one.
		for _, n := range AgentConfigPaths() {
			cand = append(cand, filepath.Join(home, n))
		}
		cand = append(cand, codexHomeConfigs(s.Environ, home)...)
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range cand {
		rp, err := r.Resolve(p)
		if err != nil || seen[rp] {
			continue
		}
		seen[rp] = true
		if c.IsRoot(rp) || !c.Access(rp, policy.Write) {
			continue
		}
		out = append(out, rp)
	}
	return out
}

// hostCaches are the host's own package and build caches
// (toolcache.HostDirs), as this process's environment places them: what
// the host's next build takes without checking (a Go build cache entry is
// an object file), so read-only wherever a policy would let a sandbox
// write it (HOME as the workspace, --writable ~/.cache); a sandbox gets a
// private cache instead (PrivateCacheDir). One in cordon's state
// directory is a private cache already (a nested launch's environment
// names its own).
func hostCaches(env []string, home string) []string {
	if env == nil {
		env = os.Environ()
	}
	env = append(slices.Clip(env), "HOME="+home)
	sd := ownState()
	return slices.DeleteFunc(toolcache.HostDirs(env), func(d string) bool { return within(d, sd) || within(d, state.Path()) })
}

// checkPolicyLinks refuses a policy file reached through a symbolic link
// the sandbox could write: the file is read-only (runsNext), but the link
// could be re-pointed at a weaker policy for the next launch.
func (s *Spec) checkPolicyLinks(r *policy.Resolver, c *policy.Canonical) error {
	if testhook.SkipProtectPolicyFile {
		return nil
	}
	for _, file := range s.Files {
		target, links, err := r.ResolveVia(file)
		if err != nil {
			continue // LoadFile read it a moment ago; nothing more to say
		}
		for _, l := range links {
			if c.Access(l, policy.Write) {
				return fmt.Errorf("--policy %s: it goes through the symbolic link %s, which the sandbox could re-point at another policy for the next launch; name the file itself (%s) or keep the link outside what the sandbox may write", file, l, target)
			}
		}
	}
	return nil
}

// namedExecutables are the absolute paths of Spec.Protect and
// Spec.Executables, as given.
func (s *Spec) namedExecutables() []string {
	var cand []string
	for _, p := range s.Protect {
		if filepath.IsAbs(p) {
			cand = append(cand, p)
		}
	}
	for _, e := range s.Executables {
		if filepath.IsAbs(e) && !testhook.SkipProtectExecutables {
			cand = append(cand, e)
		}
	}
	return cand
}

// offPath notes each of Spec.WritablePathDirs that is no directory of
// Spec.Path: it opts nothing out.
func (s *Spec) offPath(r *policy.Resolver) []string {
	on := map[string]bool{}
	for _, d := range filepath.SplitList(s.Path) {
		if filepath.IsAbs(d) {
			if rd, err := r.Resolve(filepath.Clean(d)); err == nil {
				on[rd] = true
			}
		}
	}
	var notes []string
	for _, d := range s.WritablePathDirs {
		if rd, err := r.Resolve(d); err != nil || !on[rd] {
			notes = append(notes, fmt.Sprintf("--writable-path-dir %s changes nothing: it is not a directory of PATH, whose directories are read-only in the sandbox", d))
		}
	}
	return notes
}

// pathDirs are the absolute directories of Spec.Path, resolved, but those
// Spec.WritablePathDirs opts out of.
func (s *Spec) pathDirs(r *policy.Resolver) []string {
	optOut := map[string]bool{}
	for _, d := range s.WritablePathDirs {
		if rd, err := r.Resolve(d); err == nil {
			optOut[rd] = true
		}
	}
	var dirs []string
	for _, d := range filepath.SplitList(s.Path) {
		// A relative entry ("." or "") means the shell's working
		// directory, whatever it is then: nothing to protect by path.
		if filepath.IsAbs(d) && !testhook.SkipProtectPath {
			if rd, err := r.Resolve(filepath.Clean(d)); err == nil && !optOut[rd] {
				dirs = append(dirs, rd)
			}
		}
	}
	return dirs
}

// Executables returns the paths of the running program that the user
// runs next: its resolved path (os.Executable) and the path it was
// invoked by (os.Args[0], looked up in PATH when it has no slash),
// resolved. Spec.Executables takes them.
func Executables() []string {
	var out []string
	if e, err := os.Executable(); err == nil {
		out = append(out, e)
	}
	if len(os.Args) > 0 && os.Args[0] != "" {
		a := os.Args[0]
		if !strings.Contains(a, "/") {
			a, _ = exec.LookPath(a)
		}
		if a != "" {
			if abs, err := filepath.Abs(a); err == nil {
				out = append(out, abs)
			}
		}
	}
	var res []string
	for _, e := range out {
		if rp, err := policy.Resolve(e); err == nil && !slices.Contains(res, rp) {
			res = append(res, rp)
		}
	}
	return res
}
