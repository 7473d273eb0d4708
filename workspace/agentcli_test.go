package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

// The agent's state is writable, what decides what it runs on the host
// is not, its API hosts are allowed, and nothing else changes.
func TestComposeAgentCLI(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	for _, name := range AgentCLINames() {
		for _, f := range AgentCLIs[name].Credentials {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte("{}"), 0o600))
		}
	}
	for _, name := range AgentCLINames() {
		a, err := LookupAgentCLI(name)
		require.NoError(t, err)
		require.NoError(t, a.PrepareHome(home, ws))
		c, err := Compose(Spec{Workspace: ws, Home: home, UserHome: home, AgentCLI: name})
		require.NoError(t, err, name)
		k := c.Canonical
		for _, d := range a.StateDirs {
			require.True(t, k.Access(filepath.Join(home, d, "state.db"), policy.Write), "%s: %s not writable", name, d)
		}
		for _, p := range a.Protected {
			require.False(t, k.Access(filepath.Join(home, p), policy.Write), "%s: %s writable", name, p)
		}
		// Every agent's settings, and HOME itself, stay read-only.
		for _, p := range []string{".claude.json", ".claude/settings.json", ".claude/commands/x.md", ".claude/skills/s/SKILL.md",
			".codex/config.toml", ".codex/auth.json", ".gemini/settings.json", ".gemini/trustedFolders.json", ".bashrc", "x"} {
			require.False(t, k.Access(filepath.Join(home, p), policy.Write), "%s: ~/%s writable", name, p)
		}
		require.False(t, k.Access(filepath.Join(home, ".ssh/id_ed25519"), policy.Read))
		// Its own sign-in is readable, every other agent's denied; its
		// keys pass, and only its.
		for _, other := range AgentCLINames() {
			for _, f := range AgentCLIs[other].Credentials {
				require.Equal(t, other == name, k.Access(filepath.Join(home, f), policy.Read), "%s: ~/%s", name, f)
			}
		}
		require.Equal(t, a.Keys, c.PassEnv, name)
		require.True(t, k.Access(filepath.Join(ws, "main.go"), policy.Write))
		require.NotNil(t, c.Network, name)
		require.Equal(t, a.Domains, c.Network.AllowText(), name)

		// --network on: the host's network, no allowlist.
		c, err = Compose(Spec{Workspace: ws, Home: home, AgentCLI: name, HostNetwork: true})
		require.NoError(t, err)
		require.Nil(t, c.Network)
	}
}

func TestComposeAgentCLIRefused(t *testing.T) {
	dir := composeFixture(t)
	ws := filepath.Join(dir, "ws")
	_, err := Compose(Spec{Workspace: ws, AgentCLI: "vim"})
	require.ErrorContains(t, err, `--agent "vim": no such agent; known: claude-code, codex, gemini`)
	_, err = Compose(Spec{AgentCLI: "codex"})
	require.ErrorContains(t, err, "--agent codex needs --workspace")
	_, err = Compose(Spec{Workspace: ws, AgentCLI: "codex", AgentsRoot: filepath.Join(dir, "agents")})
	require.ErrorContains(t, err, "--agents-root does not take")
}

// A link on the way to a state directory is refused: the directory the
// sandbox writes must be the one the policy names.
func TestPrepareHomeRefusesLink(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(home, ".claude")))
	a, _ := LookupAgentCLI("claude-code")
	require.ErrorContains(t, a.PrepareHome(home, t.TempDir()), "is a symbolic link")
	fi, err := os.Stat(filepath.Join(home, ".codex"))
	require.True(t, os.IsNotExist(err), "%v", fi)
}

// An agent's directory named writable by hand keeps the agent's settings,
// hooks and credentials in it read-only.
func TestComposeAgentDirWritableByHand(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	for _, d := range []string{".claude", ".codex", ".gemini"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude/settings.json"), []byte("{}"), 0o600))
	c, err := Compose(Spec{Workspace: ws, Home: home,
		Writable: []string{filepath.Join(home, ".claude"), filepath.Join(home, ".codex"), filepath.Join(home, ".gemini")}})
	require.NoError(t, err)
	k := c.Canonical
	require.True(t, k.Access(filepath.Join(home, ".claude/projects/x.jsonl"), policy.Write))
	for _, p := range []string{".claude/settings.json", ".claude/hooks/x.sh", ".claude/commands/x.md", ".codex/config.toml", ".gemini/settings.json"} {
		require.False(t, k.Access(filepath.Join(home, p), policy.Write), "~/%s writable", p)
	}
}

// Claude Code's key for a project, as its code computes it (2.1.332:
// every non-alphanumeric UTF-16 unit a "-", a long key cut at 200 with a
// Java-style hash in base 36).
func TestClaudeProjectKey(t *testing.T) {
	for in, want := range map[string]string{
		"/work/wt/agentmap":            "-work-wt-agentmap",
		"/home/u/My Proj.v2":           "-home-u-My-Proj-v2",
		"/tmp/é😀":                      "-tmp----",
		"/" + strings.Repeat("a", 250): "-" + strings.Repeat("a", 199) + "-" + "feo44x",
	} {
		require.Equal(t, want, claudeProjectKey(in), in)
	}
}

// The sandbox writes its own project's transcripts and memory in
// ~/.claude/projects, never another project's: a later session there
// obeys that project's memory.
func TestComposeClaudeProjectMemory(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	a, err := LookupAgentCLI("claude-code")
	require.NoError(t, err)
	require.NoError(t, a.PrepareHome(home, ws))
	c, err := Compose(Spec{Workspace: ws, Home: home, UserHome: home, AgentCLI: "claude-code"})
	require.NoError(t, err)
	rws, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	own := filepath.Join(home, ".claude/projects", claudeProjectKey(rws))
	require.DirExists(t, own)
	k := c.Canonical
	require.True(t, k.Access(filepath.Join(own, "abc.jsonl"), policy.Write))
	require.True(t, k.Access(filepath.Join(own, "memory/MEMORY.md"), policy.Write))
	for _, p := range []string{"-home-u-other/memory/MEMORY.md", "-home-u-other/abc.jsonl", "x.jsonl"} {
		require.False(t, k.Access(filepath.Join(home, ".claude/projects", p), policy.Write), p)
	}
	for _, p := range []string{".codex/packages/standalone/releases/0.171.0/bin/codex", ".gemini/bin/litert/lit.linux_x86_64", ".gemini/acknowledgments/agents.json"} {
		require.False(t, k.Access(filepath.Join(home, p), policy.Write), p)
	}
}
