package permission

import (
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// rule is one step of the ordered pipeline; match returns the reason when
// the rule applies.
type rule struct {
	id     string
	action Action
	match  func(d *Decider, s *subject) (string, bool)
}

// Rules lists the rule ids in the order they are tried.
func Rules() []string {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.id
	}
	return ids
}

var rules = []rule{
	{RuleCrossAgent, Deny, crossAgent},
	{RuleInvalidArguments, Deny, func(d *Decider, s *subject) (string, bool) {
		if s.parseErr == nil {
			return "", false
		}
		return s.parseErr.Error(), true
	}},
	{RuleOutsideWorkspace, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.hasPath() || s.inside && s.resErr == nil {
			return "", false
		}
		return d.outsideReason(s), true
	}},
	{RuleProtectedPath, Deny, func(d *Decider, s *subject) (string, bool) {
		if s.write() && s.verdict.Write && s.links > 0 {
			// A link made before a later launch protected the other name
			// (a repository's config, say) still writes it.
			return fmt.Sprintf("%s: %q has %d other hard link(s): a write changes the file under every name, and cordon cannot see whether one is protected; remove the extra links (or copy the file) first",
				s.req.Name, s.target, s.links), true
		}
		if s.write() && !s.verdict.Write && s.verdict.Field == policy.Readonly.Field() {
			return fmt.Sprintf("%s: %q is protected: the sandbox keeps it read-only because tools outside it run or trust it (%s)",
				s.req.Name, s.target, s.verdict.Reason), true
		}
		if s.write() && s.inside && s.resErr == nil && !mutation.noNested {
			if dir := d.nestedConfig(s); dir != "" {
				return fmt.Sprintf("%s: %q is protected: it lies in %s, agents' or editors' configuration, which they discover and obey at any depth, outside the sandbox",
					s.req.Name, s.target, dir), true
			}
		}
		return "", false
	}},
	{RulePolicyDenied, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.hasPath() {
			return "", false
		}
		op := "read"
		allowed := s.verdict.Read
		if s.write() {
			op, allowed = "write", s.verdict.Write
		}
		if !allowed {
			return fmt.Sprintf("%s: %q%s: the sandbox's policy denies this %s (%s), and %s runs outside the sandbox",
				s.req.Name, s.target, d.resolvedTo(s), op, s.verdict.Reason, s.req.Name), true
		}
		if s.below != "" {
			return fmt.Sprintf("%s: %q%s contains %s, which the sandbox's policy denies (no read, no write); %s would descend into it outside the sandbox: give a path that does not contain what is denied",
				s.req.Name, s.target, d.resolvedTo(s), s.below, s.req.Name), true
		}
		return "", false
	}},
	{RuleHardDeny, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.shell.Deny {
			return "", false
		}
		return fmt.Sprintf("%s: %s", s.req.Name, s.shell.Reason), true
	}},
	{RuleReadAllow, Allow, func(d *Decider, s *subject) (string, bool) {
		if !s.hasPath() || s.write() {
			return "", false
		}
		return fmt.Sprintf("%s: %q is inside the workspace; reads there are allowed", s.req.Name, s.target), true
	}},
	{RuleWriteApproval, Ask, func(d *Decider, s *subject) (string, bool) {
		if !s.write() {
			return "", false
		}
		return fmt.Sprintf("%s: %q is inside the workspace; changing a file needs approval", s.req.Name, s.target), true
	}},
	{RuleBashSandboxed, Allow, func(d *Decider, s *subject) (string, bool) {
		if !d.sandboxed || s.call == nil || s.tool.core != ToolBash {
			return "", false
		}
		return fmt.Sprintf("%s: `%s` runs inside cordon's sandbox, which confines what it can read and write", s.req.Name, short(s.call.Command)), true
	}},
	{RuleBashApproval, Ask, func(d *Decider, s *subject) (string, bool) {
		if s.call == nil || s.tool.core != ToolBash {
			return "", false
		}
		return fmt.Sprintf("%s: `%s` needs approval before it runs", s.req.Name, short(s.call.Command)), true
	}},
	{RuleDefaultDeny, Deny, func(d *Decider, s *subject) (string, bool) {
		if strings.HasPrefix(s.req.Name, "mcp__") {
			return fmt.Sprintf("MCP tool %q: cordon has no rule allowing it, so it is denied by default", s.req.Name), true
		}
		return fmt.Sprintf("unknown tool %q: cordon has no rule allowing it, so it is denied by default", s.req.Name), true
	}},
}

// crossAgent checks the path of a path tool, and the literal path-like
// words of a bash command, against the agents root.
func crossAgent(d *Decider, s *subject) (string, bool) {
	if d.agents == nil || s.call == nil {
		return "", false
	}
	if s.tool.core != ToolBash {
		why := d.agents.Check(s.tool.recursive, s.write(), s.lexical, s.call.Resolved)
		return prefixed(s.req.Name, why), why != ""
	}
	for _, p := range s.shell.Paths {
		resolved, _, _ := d.scope.Resolve(p.Word) // an error leaves only the lexical form to check
		if why := d.agents.Check(p.Recursive, false, d.scope.Lexical(p.Word), resolved); why != "" {
			return prefixed(s.req.Name, why), true
		}
	}
	return "", false
}

func prefixed(name, why string) string {
	if why == "" {
		return ""
	}
	return name + ": " + why
}

// nestedConfig returns the first component of the path written, below
// the workspace, that is one of workspace.NestedNames ("" when none), in the
// spelling given and as resolved: agents and editors discover their
// configuration at any depth (docs/threat-model.md, class 6), and one the
// launch did not find (created since, at a new depth) has no read-only
// root in the launched policy. On a case-insensitive volume case is
// ignored: .Claude opens .claude.
func (d *Decider) nestedConfig(s *subject) string {
	ws := d.scope.Dir()
	for _, p := range []string{s.lexical, s.call.Resolved, s.cleaned} {
		rel, ok := strings.CutPrefix(p, ws+"/")
		if !ok {
			continue
		}
		dir := ws
		for c := range strings.SplitSeq(rel, "/") {
			dir += "/" + c
			// The name may span the workspace's own last component
			// (.github/hooks with the workspace at .github): still it.
			if workspace.NestedNameEnds(dir, caseInsensitive) != "" {
				return dir
			}
		}
	}
	return ""
}
