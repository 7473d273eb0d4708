package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/guards"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Config is what a Decider needs to know about where it runs. AgentsRoot
// and Agent go together; Parent is optional.
type Config struct {
	Workspace  string
	AgentsRoot string
	Agent      string
	Parent     string
	// Cwd, when set, is the absolute directory relative paths are taken
	// from (Claude Code's session directory, which may differ from the
	// workspace); "" means the workspace. The scope is the workspace
	// either way: a relative path that leaves it is outside.
	Cwd string
	// Home is the agent's HOME, where its tools expand "~" and "~/" (an
	// agent's row in the tool table says whether they do); "" is $HOME,
	// which a hook inherits from the agent. Without an absolute HOME such
	// a path is refused.
	Home string
	// Tools is the agent whose tool names and path spellings requests
	// use; the zero value is cordon's own names and Claude Code's.
	Tools ToolSet
	// ShellSandboxed says every shell command this decider allows runs
	// inside cordon's sandbox (the hook rewrites it into 'cordon run'):
	// a command no earlier rule denies is then allowed (bash.sandboxed)
	// rather than asked about.
	ShellSandboxed bool
	// Policy is the filesystem policy the agent's sandbox is launched
	// with. File tools run outside that sandbox, so the decider never
	// allows what it denies (docs/design.md §5). Nil means what
	// `cordon run --workspace WORKSPACE
	// [--agents-root ROOT --agent ID --parent ID]` launches: the workspace
	// preset with HOME from the environment, plus the agents preset.
	Policy *policy.FsSandboxPolicy
}

// Decider applies the ordered rules. It is built once from Config and is
// safe for concurrent use.
type Decider struct {
	scope  *guards.Scope
	cwd    string             // resolved base of relative paths
	home   string             // where agents' tools expand "~"
	agents *guards.CrossAgent // nil without an agents root
	// kernel is the launched policy: a read it denies is never allowed and
	// a write it denies is never allowed nor asked, since the handlers of
	// file tools run outside the sandbox.
	kernel *policy.Canonical
	denied []string // the kernel's denied roots, for tools that descend
	strict []string // its denied and read-only roots, for case variants
	tools  map[string]tool
	// sandboxed: shell commands run inside the sandbox (Config.ShellSandboxed).
	sandboxed bool
}

// New resolves the workspace, the agents root and the launched policy
// once, so Decide only resolves the request's own path.
func New(cfg Config) (*Decider, error) {
	scope, err := guards.NewScope(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("new decider: %w", err)
	}
	d := &Decider{scope: scope, cwd: scope.Dir(), home: cfg.Home, sandboxed: cfg.ShellSandboxed}
	var ok bool
	if d.tools, ok = toolSets[cfg.Tools]; !ok {
		return nil, fmt.Errorf("new decider: unknown tool set %q", cfg.Tools)
	}
	if d.home == "" {
		d.home = os.Getenv("HOME")
	}
	if cfg.Cwd != "" {
		if !filepath.IsAbs(cfg.Cwd) {
			return nil, fmt.Errorf("new decider: cwd %q is not absolute", cfg.Cwd)
		}
		if d.cwd, err = guards.Realpath(cfg.Cwd); err != nil {
			return nil, fmt.Errorf("new decider: cwd: %w", err)
		}
	}
	switch {
	case cfg.AgentsRoot != "":
		if d.agents, err = guards.NewCrossAgent(cfg.AgentsRoot, cfg.Agent, cfg.Parent); err != nil {
			return nil, fmt.Errorf("new decider: %w", err)
		}
	case cfg.Agent != "" || cfg.Parent != "":
		return nil, fmt.Errorf("new decider: agent %q given without an agents root", cfg.Agent)
	}
	p := cfg.Policy
	if p == nil {
		lp, err := launchPolicy(scope.Dir(), cfg.AgentsRoot, cfg.Agent, cfg.Parent)
		if err != nil {
			return nil, fmt.Errorf("new decider: %w", err)
		}
		p = &lp
	}
	// The launcher denies cordon's state directory (audit key and log,
	// detection cache, masks) inside every sandbox, whatever the
	// policy (launcher.canonicalize); the file tools, which run outside
	// it, must not be given more. With HOME as the workspace the state
	// directory (~/.local/state/cordon) lies inside it.
	q := withStateDenied(*p)
	if d.kernel, err = policy.Canonicalize(q); err != nil {
		return nil, fmt.Errorf("new decider: launched policy: %w", err)
	}
	for _, r := range d.kernel.Roots() {
		if r.Kind == policy.Denied {
			d.denied = append(d.denied, r.Path)
		}
		if r.Kind == policy.Denied || r.Kind == policy.Readonly {
			d.strict = append(d.strict, r.Path)
		}
	}
	return d, nil
}

// launchPolicy is the policy `cordon run --workspace DIR` launches,
// merged with the agents preset when agentsRoot is set: the kernel view a
// Decider answers from when Config.Policy is nil.
func launchPolicy(dir, agentsRoot, agent, parent string) (policy.FsSandboxPolicy, error) {
	comp, err := workspace.Compose(workspace.Spec{Workspace: dir, AgentsRoot: agentsRoot, Agent: agent, Parent: parent,
		Executables: workspace.Executables(), Path: os.Getenv("PATH")})
	if err != nil {
		return policy.FsSandboxPolicy{}, err
	}
	return comp.Policy, nil
}

// Workspace is the resolved workspace directory.
func (d *Decider) Workspace() string { return d.scope.Dir() }

// Policy is the launched policy the decider answers from.
func (d *Decider) Policy() *policy.Canonical { return d.kernel }

// subject is a request prepared for the rules: parsed once, resolved once.
type subject struct {
	req      Request
	tool     tool
	known    bool
	call     *Call
	parseErr error
	target   string // the path or glob prefix as given
	lexical  string
	inside   bool
	resErr   error
	shell    guards.ShellVerdict
	verdict  policy.Verdict // the launched policy on Resolved (inside only)
	below    string         // existing denied roots below a descending tool's target
	cleaned  string         // the resolved cleaned reading, when it is what refuses
	links    uint64         // other hard links of a write's target
	fold     bool           // the tool matches names without case (tool.nocase)
}

func (s *subject) write() bool {
	return s.call != nil && (s.tool.core == ToolWriteFile || s.tool.core == ToolEditFile)
}

func (s *subject) hasPath() bool {
	return s.call != nil && s.tool.core != ToolBash
}

// Decide runs the rules over req; the first that matches decides.
func (d *Decider) Decide(req Request) Decision {
	dec, _ := d.Evaluate(req)
	return dec
}

// Evaluate is Decide that also returns the checked call (nil when the
// arguments are invalid or the tool is unknown) for the handler to use, so
// it acts on the path the decision was made on.
func (d *Decider) Evaluate(req Request) (Decision, *Call) {
	s := d.prepare(req)
	for _, r := range rules {
		if reason, ok := r.match(d, s); ok {
			return Decision{ToolUseID: req.ToolUseID, Action: r.action, RuleID: r.id, Reason: reason}, s.call
		}
	}
	panic("permission: default.deny did not match") // unreachable: the last rule always matches
}

// prepare gathers what the rules look at for req: the tool and its
// parsed arguments; for a shell command its classification; for a path
// tool the path it acts on, resolved in the workspace, and what the
// kernel's view allows there.
func (d *Decider) prepare(req Request) *subject {
	s := &subject{req: req}
	s.tool, s.known = d.tools[req.Name]
	if !s.known {
		return s
	}
	s.call, s.parseErr = parse(req, s.tool, d.home)
	if s.parseErr != nil {
		s.call = nil
		return s
	}
	if s.tool.core == ToolBash {
		s.shell = guards.ClassifyShell(s.call.Command)
		return s
	}
	s.pickTarget()
	s.fold = s.tool.nocase && !s.call.caseSensitive()
	from := d.fromCwd(s.target)
	s.lexical = d.scope.Lexical(from)
	var resolved string
	var err error
	resolved, s.inside, err = d.scope.Resolve(from)
	if s.resErr == nil {
		s.resErr = err
	}
	s.call.Resolved = resolved
	if !s.inside || s.resErr != nil {
		return s
	}
	d.inspect(s, resolved, from)
	return s
}

// pickTarget sets the path a path tool acts on: a glob's fixed prefix
// (joined to its path), else the path argument, "." when empty.
func (s *subject) pickTarget() {
	if s.tool.globKey == "" {
		s.target = s.call.Path
		if s.target == "" {
			s.target = "."
		}
		return
	}
	full := s.call.Pattern
	if !strings.HasPrefix(full, "/") && s.call.Path != "" {
		full = strings.TrimSuffix(s.call.Path, "/") + "/" + full
	}
	var climbs, dynamic bool
	s.target, dynamic, climbs = guards.GlobPrefix(full)
	if climbs {
		s.resErr = fmt.Errorf("pattern %q climbs out with \"..\" after a wildcard", s.call.Pattern)
	}
	if s.tool.walk && !mutation.noWalk {
		s.walkRoot(dynamic)
	}
}

// walkRoot bounds what a pattern can match when it filters a ripgrep walk
// (Claude Code's Glob). The walk starts at an absolute pattern's fixed
// directory (for a pattern without a wildcard, the directory above it, by
// Node's dirname) or else at the path argument (the cwd when absent); a
// filter without a slash, other than at its end, matches at any depth
// below that root: "id_ed25519" lists ~/.ssh/id_ed25519. Such a pattern
// is decided on the root.
func (s *subject) walkRoot(dynamic bool) {
	p := s.call.Pattern
	switch {
	case strings.HasPrefix(p, "/"):
		if dynamic {
			return // the fixed prefix is the root, and the filter's first component is matched there
		}
		if t := strings.TrimRight(p, "/"); t == "" {
			s.target = "/"
		} else {
			s.target = filepath.Dir(t)
		}
	case !strings.Contains(strings.TrimRight(p, "/"), "/"):
		s.target = s.call.Path
		if s.target == "" {
			s.target = "."
		}
	}
}

// fromCwd takes a relative target from the cwd, joined without cleaning
// so that ".." applies after the symlinks before it, as in the kernel. A
// "~" stays first, where the scope refuses it: tools expand it.
func (d *Decider) fromCwd(target string) string {
	if !filepath.IsAbs(target) && (!strings.HasPrefix(target, "~") || mutation.noTilde) && d.cwd != d.scope.Dir() {
		return d.cwd + "/" + target
	}
	return target
}

// inspect records, for a target resolved inside the workspace, what the
// kernel's view allows there, the other names of a file to be written,
// what is denied below a directory a recursive tool descends into, and
// the cleaned reading of a path with "..".
func (d *Decider) inspect(s *subject, resolved, from string) {
	s.verdict = d.explain(resolved, s.fold)
	if mutation.noKernel {
		s.verdict.Read, s.verdict.Write = true, true
	}
	if s.write() {
		s.links = extraNames(resolved)
	}
	if s.tool.recursive && !mutation.noBelow {
		s.below = d.deniedBelow(resolved, s.fold)
	}
	if hasDotDot(from) && !mutation.noCleaned {
		d.alsoCleaned(s)
	}
}

// mutation removes one defence at a time, for the test that proves the
// property test notices; every field is false outside that test.
var mutation struct{ noKernel, noCleaned, noBelow, noTilde, noWalk, noSpelling, noNested bool }

// alsoCleaned checks the other reading of a path with "..": a tool that
// cleans a path before opening it (as Node's path.resolve does) drops the
// component before each ".." instead of climbing from where a symlink led.
// Both readings must be inside the workspace and allowed.
func (d *Decider) alsoCleaned(s *subject) {
	clean, inside, err := d.scope.Resolve(s.lexical)
	if err != nil || !inside {
		s.inside, s.cleaned = false, clean
		if err != nil {
			s.resErr = fmt.Errorf("cleaned to %s: %w", s.lexical, err)
		}
		return
	}
	if clean == s.call.Resolved {
		return
	}
	v := d.explain(clean, s.fold)
	if s.verdict.Read && !v.Read || s.verdict.Write && !v.Write {
		v.Read, v.Write = v.Read && s.verdict.Read, v.Write && s.verdict.Write
		s.verdict, s.cleaned = v, clean
	}
	if s.tool.recursive && s.below == "" {
		s.below = d.deniedBelow(clean, s.fold)
	}
}

func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// deniedBelow lists the existing denied roots strictly below dir: a tool
// that descends from dir (glob, grep, list) would read them, outside the
// sandbox. A denied root that does not exist has nothing to read. fold:
// the tool matches names without case.
func (d *Decider) deniedBelow(dir string, fold bool) string {
	var below []string
	for _, r := range d.denied {
		if r != dir && d.withinFold(dir, r, fold) {
			if _, err := os.Lstat(r); err == nil {
				below = append(below, r)
			}
		}
	}
	return strings.Join(below, ", ")
}

// outsideReason explains a path that is not inside the workspace.
func (d *Decider) outsideReason(s *subject) string {
	if s.resErr != nil {
		return fmt.Sprintf("%s: cannot resolve %q (%v); a path cordon cannot resolve counts as outside the workspace %s",
			s.req.Name, s.target, s.resErr, d.scope.Dir())
	}
	how := ""
	if s.cleaned != "" {
		return fmt.Sprintf("%s: %q resolves to %s, but a tool that cleans \"..\" first would open %s, outside the workspace %s",
			s.req.Name, s.target, s.call.Resolved, s.cleaned, d.scope.Dir())
	}
	if s.call.Resolved != s.lexical {
		how = fmt.Sprintf(" resolves to %s, which is", s.call.Resolved)
	} else {
		how = " is"
	}
	return fmt.Sprintf("%s: %q%s outside the workspace %s", s.req.Name, s.target, how, d.scope.Dir())
}

// resolvedTo names where the request's path really points when that
// differs from its spelling.
func (d *Decider) resolvedTo(s *subject) string {
	if s.cleaned != "" {
		return " (cleaned of \"..\" as some tools do, " + s.cleaned + ")"
	}
	if s.call.Resolved == s.lexical {
		return ""
	}
	return " (resolves to " + s.call.Resolved + ")"
}

// short keeps reasons readable when commands are long.
func short(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

// withStateDenied adds cordon's state directory to p's denied roots, as
// the launcher does for every launch (launcher.canonicalize): a policy
// that names it in another field is then refused here too, where it used
// to leave the file tools free to write it.
func withStateDenied(p policy.FsSandboxPolicy) policy.FsSandboxPolicy {
	sd, err := policy.Resolve(state.Path())
	if err != nil {
		return p
	}
	p.DeniedRoots = append(append([]string(nil), p.DeniedRoots...), sd)
	return p
}
