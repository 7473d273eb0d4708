package workspace

import (
	"os"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

// docHeadings are the headings of docs/agents.md under which each map's
// table stands.
var docHeadings = map[string]string{
	"claude-code": "#### Claude Code ",
	"codex":       "#### Codex ",
	"gemini":      "#### Gemini CLI ",
	"copilot":     "#### GitHub Copilot CLI ",
}

const docTableHead = "| Path under `HOME` | Class | Inside | Read from |\n|---|---|---|---|\n"

// TestAgentHomesDoc holds docs/agents.md's tables to AgentHomes, the
// "Inside" column to what the policy does (TestAgentHomePolicy holds
// that). CORDON_UPDATE_DOCS=1 rewrites them from the map.
func TestAgentHomesDoc(t *testing.T) {
	const file = "../docs/agents.md"
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	doc := string(b)
	for agent := range AgentHomes {
		h, ok := docHeadings[agent]
		require.True(t, ok, "%s: no heading for its table in docs/agents.md", agent)
		at := strings.Index(doc, "\n"+h)
		require.GreaterOrEqual(t, at, 0, "%s: docs/agents.md has no heading %q", agent, h)
		start := at + 1 + strings.Index(doc[at+1:], "\n\n") + 2
		end := start + strings.Index(doc[start:], "\n\n") + 1
		want := docTable(agent)
		if os.Getenv("CORDON_UPDATE_DOCS") != "" {
			doc = doc[:start] + want + doc[end:]
			continue
		}
		require.Equal(t, want, doc[start:end], "%s: docs/agents.md's table differs from AgentHomes (CORDON_UPDATE_DOCS=1 go test ./workspace -run TestAgentHomesDoc rewrites it)", agent)
	}
	if os.Getenv("CORDON_UPDATE_DOCS") != "" {
		require.NoError(t, os.WriteFile(file, []byte(doc), 0o644))
	}
}

func docTable(agent string) string {
	var b strings.Builder
	b.WriteString(docTableHead)
	for _, r := range AgentHomes[agent] {
		b.WriteString("| `" + r.Path + "` | " + r.Class.String() + " | " + inside(agent, r) + " | " + r.Source + " |\n")
	}
	return b.String()
}

// inside is what a sandbox of --agent may do with r's path.
func inside(agent string, r HomePath) string {
	if _, ok := AgentCLIs[agent]; !ok {
		return "read-only (no --agent preset)"
	}
	perProject := map[string]bool{".claude/projects": true, ".gemini/tmp": true, ".gemini/history": true}
	switch {
	case r.Class == Secrets:
		return "readable by this agent only"
	case Residual[r.Path]:
		return "writable (residual)"
	case strings.HasSuffix(r.Path, "/.project_root"):
		return "read-only"
	case perProject[r.Path] && r.Class == Keeps:
		return "this project's entry writable"
	case perProject[r.Path]:
		return "read-only; this project's entry writable"
	case perProject[r.Path[:max(0, strings.LastIndex(r.Path, "/*"))]]:
		return "this project's writable, others read-only"
	case r.Class == Keeps:
		return "writable"
	}
	return "read-only"
}

// An agent cordon does not run inside (no AgentCLI) keeps its whole home
// read-only when HOME is the workspace: no row of its map is writable.
func TestAgentHomeOutside(t *testing.T) {
	dir := composeFixture(t)
	home := dir + "/home"
	require.NoError(t, os.MkdirAll(home, 0o700))
	c, err := Compose(Spec{Workspace: home, Home: home, UserHome: home})
	require.NoError(t, err)
	// Cursor has no map: its home is read-only as a whole.
	for _, p := range []string{".cursor/hooks.json", ".cursor/cli-config.json", ".config/Cursor/User/settings.json", ".local/share/cursor-agent/versions/1/cursor-agent"} {
		require.False(t, c.Canonical.Access(home+"/"+p, policy.Write), "cursor: ~/%s is writable with HOME as the workspace", p)
	}
	for agent, rows := range AgentHomes {
		if _, ok := AgentCLIs[agent]; ok {
			continue
		}
		for _, r := range rows {
			p := home + "/" + strings.ReplaceAll(r.Path, "*", "other")
			require.False(t, c.Canonical.Access(p, policy.Write), "%s: ~/%s is writable with HOME as the workspace", agent, r.Path)
		}
	}
}
