package permission

import (
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/guards"
	"github.com/cordon-sandbox/cordon/policy"
)

// Config is what a Decider needs to know about where it runs. AgentsRoot
// and Agent go together; Parent is optional.
type Config struct {
	Workspace  string
	AgentsRoot string
	Agent      string
	Parent     string
}

// Decider applies the ordered rules. It is built once from Config and is
// safe for concurrent use.
type Decider struct {
	scope  *guards.Scope
	agents *guards.CrossAgent // nil without an agents root
	// kernel is the workspace preset's policy, the one `cordon run
	// --workspace` enforces: a write the sandbox would refuse (.git/hooks,
	// .vscode, ...) is refused here too, since file tools run outside it.
	kernel *policy.Canonical
}

// New resolves the workspace and agents root once, so Decide only resolves
// the request's own path.
func New(cfg Config) (*Decider, error) {
	scope, err := guards.NewScope(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("new decider: %w", err)
	}
	d := &Decider{scope: scope}
	wp, err := policy.Workspace(scope.Dir(), policy.WorkspaceOptions{})
	if err == nil {
		d.kernel, err = policy.Canonicalize(wp)
	}
	if err != nil {
		return nil, fmt.Errorf("new decider: %w", err)
	}
	switch {
	case cfg.AgentsRoot != "":
		if d.agents, err = guards.NewCrossAgent(cfg.AgentsRoot, cfg.Agent, cfg.Parent); err != nil {
			return nil, fmt.Errorf("new decider: %w", err)
		}
	case cfg.Agent != "" || cfg.Parent != "":
		return nil, fmt.Errorf("new decider: agent %q given without an agents root", cfg.Agent)
	}
	return d, nil
}

// Workspace is the resolved workspace directory.
func (d *Decider) Workspace() string { return d.scope.Dir() }

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

func (d *Decider) prepare(req Request) *subject {
	s := &subject{req: req}
	s.tool, s.known = tools[req.Name]
	if !s.known {
		return s
	}
	s.call, s.parseErr = parse(req, s.tool)
	if s.parseErr != nil {
		s.call = nil
		return s
	}
	switch {
	case s.tool.core == ToolBash:
		s.shell = guards.ClassifyShell(s.call.Command)
		return s
	case s.tool.globKey != "":
		full := s.call.Pattern
		if !strings.HasPrefix(full, "/") && s.call.Path != "" {
			full = strings.TrimSuffix(s.call.Path, "/") + "/" + full
		}
		var climbs bool
		s.target, _, climbs = guards.GlobPrefix(full)
		if climbs {
			s.resErr = fmt.Errorf("pattern %q climbs out with \"..\" after a wildcard", s.call.Pattern)
		}
	default:
		s.target = s.call.Path
		if s.target == "" {
			s.target = "."
		}
	}
	s.lexical = d.scope.Lexical(s.target)
	var resolved string
	var err error
	resolved, s.inside, err = d.scope.Resolve(s.target)
	if s.resErr == nil {
		s.resErr = err
	}
	s.call.Resolved = resolved
	return s
}

// outsideReason explains a path that is not inside the workspace.
func (d *Decider) outsideReason(s *subject) string {
	if s.resErr != nil {
		return fmt.Sprintf("%s: cannot resolve %q (%v); a path cordon cannot resolve counts as outside the workspace %s",
			s.req.Name, s.target, s.resErr, d.scope.Dir())
	}
	how := ""
	if s.call.Resolved != s.lexical {
		how = fmt.Sprintf(" resolves to %s, which is", s.call.Resolved)
	} else {
		how = " is"
	}
	return fmt.Sprintf("%s: %q%s outside the workspace %s", s.req.Name, s.target, how, d.scope.Dir())
}

// short keeps reasons readable when commands are long.
func short(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}
