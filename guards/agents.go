package guards

import (
	"fmt"
	"strings"
)

// CrossAgent keeps one agent out of the directories of the others that
// share an agents root: root/ID is the agent's own, root/PARENT is readable,
// everything else under root is off limits.
type CrossAgent struct {
	roots  []string // the root as given (cleaned) and resolved, deduplicated
	agent  string
	parent string
}

// NewCrossAgent checks the ids and resolves the root once. The root need
// not exist yet.
func NewCrossAgent(root, agent, parent string) (*CrossAgent, error) {
	if err := checkPath(root); err != nil {
		return nil, fmt.Errorf("agents root: %w", err)
	}
	for _, id := range []string{agent, parent} {
		if strings.ContainsAny(id, "/\x00") || id == "." || id == ".." {
			return nil, fmt.Errorf("agent id %q: must be a single path component", id)
		}
	}
	if agent == "" {
		return nil, fmt.Errorf("agents root %q: an agent id is required", root)
	}
	abs, real, err := absReal("agents root", root)
	if err != nil {
		return nil, err
	}
	g := &CrossAgent{roots: []string{abs}, agent: agent, parent: parent}
	if real != abs {
		g.roots = append(g.roots, real)
	}
	return g, nil
}

// Root is the resolved agents root.
func (g *CrossAgent) Root() string { return g.roots[len(g.roots)-1] }

// Check returns "" when an access to a path is fine, else why it is not.
// Each of forms is a spelling of the same path (lexical, resolved); every
// one is checked against every spelling of the root, because a symlink can
// hide the root from either side. recursive marks a tool that descends
// (glob, grep, list, find); write marks a modification.
func (g *CrossAgent) Check(recursive, write bool, forms ...string) string {
	for _, p := range forms {
		if p == "" {
			continue
		}
		for _, root := range g.roots {
			if why := g.check(root, p, recursive, write); why != "" {
				return why
			}
		}
	}
	return ""
}

func (g *CrossAgent) check(root, p string, recursive, write bool) string {
	if !Within(root, p) {
		if recursive && Within(p, root) {
			return fmt.Sprintf("%s contains the agents root %s; descending into it would enter other agents' directories", p, root)
		}
		return ""
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
	if rel == "" {
		return fmt.Sprintf("%s is the agents root; agent %q may only use %s", p, g.agent, join(root, g.agent))
	}
	first, _, _ := strings.Cut(rel, "/")
	switch {
	case first == g.agent:
		return ""
	case first == g.parent && g.parent != "":
		if write {
			return fmt.Sprintf("%s belongs to parent agent %q, which agent %q may read but not modify", p, g.parent, g.agent)
		}
		return ""
	}
	return fmt.Sprintf("%s belongs to agent %q, not to agent %q", p, first, g.agent)
}
