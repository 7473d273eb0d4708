package permission

import (
	"fmt"
	"strings"
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
	{RuleWorkspace, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.write() {
			return "", false
		}
		if !s.inside || s.resErr != nil {
			return d.outsideReason(s) + "; writes there are never allowed", true
		}
		if v := d.kernel.Explain(s.call.Resolved); !v.Write {
			return fmt.Sprintf("%s: %q is protected: tools outside the sandbox run or trust it (%s)", s.req.Name, s.target, v.Reason), true
		}
		return "", false
	}},
	{RuleInvalidArguments, Deny, func(d *Decider, s *subject) (string, bool) {
		if s.parseErr == nil {
			return "", false
		}
		return s.parseErr.Error(), true
	}},
	{RuleHardDeny, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.shell.Deny {
			return "", false
		}
		return fmt.Sprintf("%s: %s", s.req.Name, s.shell.Reason), true
	}},
	{RuleOutsideWorkspace, Deny, func(d *Decider, s *subject) (string, bool) {
		if !s.hasPath() || s.inside && s.resErr == nil {
			return "", false
		}
		return d.outsideReason(s), true
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
