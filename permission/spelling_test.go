package permission

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/blank"
)

// Every character JavaScript's trim removes (blank.TrimJS, from the
// specification's tables; Node 20 removes exactly these) is refused at
// either edge of a Claude Code path, so no path cordon decides is one
// Claude Code would open trimmed.
func TestEdgeBlankCoversJavaScriptTrim(t *testing.T) {
	n := 0
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if blank.TrimJS(string(r)) != "" {
			continue
		}
		n++
		require.True(t, edgeBlank(r), "%U is trimmed by JavaScript but not refused", r)
		for _, p := range []string{string(r) + "src", "src" + string(r)} {
			_, err := spellClaudeCode.open("Grep", "path", p, "/home/u")
			require.Error(t, err, "%q", p)
		}
	}
	require.Equal(t, 25, n, "JavaScript's trim removes 25 characters")
}

func TestClaudeCodeSpelling(t *testing.T) {
	for _, c := range []struct{ in, home, out, err string }{
		{in: "src/a", home: "/h", out: "src/a"},
		{in: "/abs/a", home: "/h", out: "/abs/a"},
		{in: "~", home: "/h", out: "/h"},
		{in: "~/.ssh", home: "/h", out: "/h/.ssh"},
		{in: "~user/x", home: "/h", out: "~user/x"}, // Claude Code does not expand it; the scope refuses it
		{in: "a ~/b", home: "/h", out: "a ~/b"},
		{in: "~/x", home: "", err: "HOME"},
		{in: "~/x", home: "rel", err: "HOME"},
		{in: " x", home: "/h", err: "U+0020"},
		{in: "x\u200b", home: "/h", err: "U+200B"},    // a format character: not trimmed by JavaScript, refused anyway
		{in: "a\u0001b", home: "/h", err: "U+0001"},   // control characters anywhere
		{in: "a\u2067b", home: "/h", err: "U+2067"},   // text direction isolate
		{in: "a\u0085b", home: "/h", err: "U+0085"},   // C1 control
		{in: "a\u3000b", home: "/h", out: "a\u3000b"}, // inside a name, a space is the name's own
	} {
		got, err := spellClaudeCode.open("Glob", "path", c.in, c.home)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.out, got, "%q", c.in)
		exact, err := spellExact.open("glob", "path", c.in, c.home)
		require.NoError(t, err)
		require.Equal(t, c.in, exact, "cordon's own tools read the path as given")
	}
}

// The other agents' spellings: Copilot and Cursor take absolute paths
// only; Gemini neither trims nor expands, strips a leading "@" and
// URI-decodes; a Codex patch path is taken as written. Each refuses what
// the agent would open otherwise, "~" is left for the scope to refuse.
func TestOtherAgentsSpellings(t *testing.T) {
	for _, c := range []struct {
		sp       spelling
		in, out  string
		errMatch string
	}{
		{sp: spellAbsolute, in: "/w/a", out: "/w/a"},
		{sp: spellAbsolute, in: "a", errMatch: "not an absolute path"},
		{sp: spellAbsolute, in: "~/.ssh/id", errMatch: "not an absolute path"},
		{sp: spellAbsolute, in: " /w/.ssh", errMatch: "U+0020"},
		{sp: spellAbsolute, in: "/w/.ssh\u00a0", errMatch: "U+00A0"},
		{sp: spellGemini, in: "src/a", out: "src/a"},
		{sp: spellGemini, in: "~/.ssh/id", out: "~/.ssh/id"},
		{sp: spellGemini, in: " ~/.ssh/id", errMatch: "U+0020"},
		{sp: spellGemini, in: "@.ssh/id", errMatch: `"@"`},
		{sp: spellGemini, in: "src/%2e%2e/.ssh", errMatch: "URI-decodes"},
		{sp: spellGemini, in: "a\x00b", errMatch: "U+0000"},
		{sp: spellRelaxed, in: "~/x", out: "~/x"},
		{sp: spellRelaxed, in: " x", errMatch: "U+0020"},
	} {
		got, err := c.sp.open("t", "path", c.in, "/h")
		if c.errMatch != "" {
			require.ErrorContains(t, err, c.errMatch, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		require.Equal(t, c.out, got, "%q", c.in)
	}
	// A decider with each agent's set refuses "~" (not expanded) and
	// never reads a name of another set.
	home, _ := homeFixture(t)
	for set, r := range map[ToolSet]Request{
		ToolsGemini:  req("read_file", map[string]string{"file_path": "~/.ssh/id_ed25519"}),
		ToolsCopilot: req("view", map[string]string{"path": "~/.ssh/id_ed25519"}),
		ToolsCursor:  req("read_file", map[string]string{"file_path": "~/.ssh/id_ed25519"}),
	} {
		d, err := New(Config{Workspace: home, Tools: set})
		require.NoError(t, err)
		got := d.Decide(r)
		require.Equal(t, Deny, got.Action, "%s: %s", set, got.Reason)
		got = d.Decide(req("Read", map[string]string{"file_path": home + "/src/main.go"}))
		require.Equal(t, RuleDefaultDeny, got.RuleID, "%s knows Claude Code's Read", set)
	}
	_, err := New(Config{Workspace: home, Tools: "vim"})
	require.ErrorContains(t, err, "unknown tool set")
}

// Every path field of every agent's file tools refuses, at either edge,
// each character any of the three languages trims (Rust's str::trim for
// Codex, JavaScript's trim for Claude Code, Gemini CLI and Copilot CLI,
// Python's strip): whichever the agent applies, cordon never decides on
// a path the agent would open trimmed (docs/agents.md, "Fields the hooks
// read").
func TestEveryPathFieldRefusesEveryTrim(t *testing.T) {
	var trimmed []rune
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r < 0xD800 || r > 0xDFFF {
			if s := string(r); blank.TrimRust(s) == "" || blank.TrimJS(s) == "" || blank.TrimPython(s) == "" {
				trimmed = append(trimmed, r)
			}
		}
	}
	require.Len(t, trimmed, 30, "the union of the three trims")
	for set, ts := range toolSets {
		for name, tl := range ts {
			if tl.pathKey == "" || tl.spell == spellExact {
				continue
			}
			for _, r := range trimmed {
				for _, p := range []string{string(r) + "/w/src", "/w/src" + string(r)} {
					_, err := tl.spell.open(name, tl.pathKey, p, "/h")
					require.Error(t, err, "%s %s %q: %U", set, name, tl.pathKey, r)
				}
			}
		}
	}
}
