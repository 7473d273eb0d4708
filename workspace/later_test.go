package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

// TestNestedConfigurationAtAnyDepth: agents' and editors' configuration
// is read-only wherever the scan finds it, in a repository or not, and at
// the top whether or not it exists; what lies beside it stays writable.
// A second launch, answered from the scan's record, protects the same.
func TestNestedConfigurationAtAnyDepth(t *testing.T) {
	ws := fixture(t, map[string]string{
		"sub/.claude/skills/x/SKILL.md":  "---\n",
		"sub/.cursor/mcp.json":           "{}",
		"sub/.mcp.json":                  "{}",
		"a/b/c/.zed/settings.json":       "{}",
		"a/b/.helix/languages.toml":      "",
		"a/.nvim.lua":                    "",
		"a/b/c/d/e/f/.exrc":              "",
		"a/b/c/d/e/f/.vscode/tasks.json": "{}",
		"lib/main.go":                    "x",
	})
	cache := t.TempDir()
	for _, launch := range []string{"first", "from the record"} {
		c := canon(t, ws, Options{ScanCache: cache})
		for _, rel := range []string{
			"sub/.claude/skills/x/SKILL.md", "sub/.claude/skills/y/SKILL.md", "sub/.cursor/hooks.json",
			"sub/.mcp.json", "a/b/c/.zed/tasks.json", "a/b/.helix/languages.toml", "a/.nvim.lua",
			"a/b/c/d/e/f/.exrc", "a/b/c/d/e/f/.vscode/tasks.json",
			".zed", ".helix/languages.toml", ".nvim.lua", ".nvimrc", ".exrc", ".cursor/mcp.json",
		} {
			require.False(t, c.Access(filepath.Join(ws, rel), policy.Write), "%s: %s", launch, rel)
		}
		for _, rel := range []string{"sub/file", "lib/main.go", "a/b/c/d/e/f/x"} {
			require.True(t, c.Access(filepath.Join(ws, rel), policy.Write), "%s: %s", launch, rel)
		}
	}
}

// TestHomeLoaders: with HOME in the workspace, what a login, the session
// bus, the desktop or a shell reads is read-only, existing or not, and
// where XDG_CONFIG_HOME and XDG_DATA_HOME move it, there too.
func TestHomeLoaders(t *testing.T) {
	ws := fixture(t, map[string]string{"home/.bashrc": "", "home/cfg/": "", "home/data/": ""})
	home := filepath.Join(ws, "home")
	loaders := []string{
		".local/share/systemd/user/default.target.wants/x.service", ".local/share/dbus-1/services/org.x.service",
		".inputrc", ".pam_environment", ".config/environment.d/x.conf", ".config/systemd/user/x.service",
		".config/autostart/x.desktop", ".config/plasma-workspace/env/x.sh", ".xsession", ".local/share/applications/x.desktop",
	}
	c := canon(t, ws, Options{Home: home})
	for _, rel := range loaders {
		require.False(t, c.Access(filepath.Join(home, rel), policy.Write), rel)
	}
	require.True(t, c.Access(filepath.Join(home, ".local/share/other/x"), policy.Write))
	require.True(t, c.Access(filepath.Join(home, "cfg/systemd/user/x.service"), policy.Write), "no XDG_CONFIG_HOME given")

	t.Setenv("XDG_CONFIG_HOME", "relative/ignored")
	c = canon(t, ws, Options{Home: home, DataHome: filepath.Join(home, "data")})
	for _, rel := range []string{"data/systemd/user/x.service", "data/dbus-1/services/x.service", "data/applications/x.desktop"} {
		require.False(t, c.Access(filepath.Join(home, rel), policy.Write), rel)
	}
	require.True(t, c.Access(filepath.Join(home, "cfg/systemd/user/x.service"), policy.Write), "a relative XDG_CONFIG_HOME is ignored")

	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	c = canon(t, ws, Options{Home: home})
	for _, rel := range []string{"cfg/systemd/user/x.service", "cfg/environment.d/x.conf", "cfg/autostart/x.desktop", "cfg/fish/config.fish", "cfg/git/config"} {
		require.False(t, c.Access(filepath.Join(home, rel), policy.Write), rel)
	}
	require.True(t, c.Access(filepath.Join(home, "cfg/other"), policy.Write))
}

// TestScanBoundKeepsKnownConfiguration: configuration an earlier scan
// found stays protected when a sandbox fills the workspace with
// directories to push it past the bound, with the names still there.
func TestScanBoundKeepsKnownConfiguration(t *testing.T) {
	defer func(n int) { scanDirs = n }(scanDirs)
	scanDirs = 200
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache := t.TempDir()
	dir := filepath.Join(ws, "third_party", "x", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), nil, 0o644))
	first, cut := cachedScan(ws, cache)
	require.False(t, cut)
	require.Equal(t, []gitPlace{{Path: dir, Conf: 1<<nestedIndex[".claude"] | 1<<nestedIndex[".mcp.json"]}}, first)

	for i := 0; i < scanDirs; i++ {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a-junk", "d"+strconv.Itoa(i)), 0o755))
	}
	require.NoError(t, os.Remove(filepath.Join(dir, ".mcp.json")))
	got, cut := cachedScan(ws, cache)
	require.True(t, cut)
	require.Equal(t, []gitPlace{{Path: dir, Conf: 1 << nestedIndex[".claude"]}}, got, "known before, kept: what is still there")

	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".claude")))
	got, _ = cachedScan(ws, cache)
	require.Empty(t, got)
}

// TestFreshConfigurationIsNoted: configuration that appeared in a nested
// directory since the previous launch is named once, quoted; none is
// named on a first launch, which has nothing to compare with.
func TestFreshConfigurationIsNoted(t *testing.T) {
	ws := fixture(t, map[string]string{"old/.claude/settings.json": "{}", "src/a.go": ""})
	cache := t.TempDir()
	notes := func() string {
		c := canon(t, ws, Options{ScanCache: cache})
		return strings.Join(c.Notes(), "\n")
	}
	require.NotContains(t, notes(), "appeared")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src", "x\n", ".claude", "skills", "s"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "old", ".mcp.json"), nil, 0o644))
	n := notes()
	require.Contains(t, n, "appeared since the last launch")
	require.Contains(t, n, strconv.Quote(filepath.Join(ws, "src", "x\n", ".claude")))
	require.Contains(t, n, strconv.Quote(filepath.Join(ws, "old", ".mcp.json")))
	require.NotContains(t, n, strconv.Quote(filepath.Join(ws, "old", ".claude")))
	require.NotContains(t, notes(), "appeared", "named once")
}
