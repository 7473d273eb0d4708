package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var testHook = Hook{Cordon: "/opt/cordon/bin/cordon", SandboxBash: true}

// apply writes a planned change: apply(t)(Install(...)).
func apply(t *testing.T) func(*Change, error) *Change {
	return func(c *Change, err error) *Change {
		t.Helper()
		require.NoError(t, err)
		require.NoError(t, c.Apply(false))
		return c
	}
}

func TestInstallEveryAgentOnNothingThenRemove(t *testing.T) {
	for _, a := range agents {
		t.Run(a.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := a.SettingsPath(Project, "/nonexistent", dir, func(string) string { return "" })
			c := apply(t)(Install(a, path, testHook))
			require.True(t, c.Changed())
			require.True(t, strings.HasPrefix(c.Diff(), "--- /dev/null\n+++ "+path+"\n@@ -0,0 +1,"), c.Diff())
			cmds, err := Commands(a, path)
			require.NoError(t, err)
			require.Len(t, cmds, len(a.events))
			require.Equal(t, "/opt/cordon/bin/cordon hook "+a.Name+" --sandbox-bash", cmds[0])
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

			again, err := Install(a, path, testHook)
			require.NoError(t, err)
			require.False(t, again.Changed(), "a second run changes nothing")
			require.Empty(t, again.Diff())

			r := apply(t)(Remove(a, path))
			require.True(t, r.Changed())
			if a.ownFile {
				require.NoFileExists(t, path)
				return
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			want := "{}\n"
			if a.version {
				want = "{\n  \"version\": 1\n}\n"
			}
			require.Equal(t, want, string(b))
		})
	}
}

const claudeSettings = `// my settings
{
    "model": "opus", // the big one
    /* hooks of mine */
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check.sh"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
    },
    "env": {"A": "1"}
}
`

func TestInstallKeepsCommentsAndOtherHooks(t *testing.T) {
	a, err := Lookup("claude-code")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(claudeSettings), 0o640))
	c := apply(t)(Install(a, path, testHook))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	got := string(b)
	// Everything before cordon's text is the file's own, byte for byte.
	cut := strings.Index(claudeSettings, `"~/bin/check.sh"}]}`) + len(`"~/bin/check.sh"}]}`)
	require.Equal(t, claudeSettings[:cut], got[:cut])
	require.Contains(t, got, `"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]`)
	require.Contains(t, got, "    \"env\": {\"A\": \"1\"}\n}\n")
	require.Contains(t, got, "            {\n                \"matcher\": \"Bash|Monitor|")
	require.Contains(t, c.Diff(), "+            {\n")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the file's mode is kept")
	cmds, err := Commands(a, path)
	require.NoError(t, err)
	require.Len(t, cmds, 2)

	// Another binary or other flags: cordon's entry is replaced, not added.
	c2 := apply(t)(Install(a, path, Hook{Cordon: "/usr/local/bin/cordon", AllowSandboxed: true, Audit: "/var/log/my log"}))
	require.True(t, c2.Changed())
	cmds, err = Commands(a, path)
	require.NoError(t, err)
	require.Equal(t, []string{
		"/usr/local/bin/cordon hook claude-code --allow-sandboxed --audit '/var/log/my log'",
		"/usr/local/bin/cordon hook claude-code --allow-sandboxed --audit '/var/log/my log'",
	}, cmds)

	apply(t)(Remove(a, path))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, claudeSettings, string(b), "remove gives the file back byte for byte")
}

func TestUnparsableFileIsRefusedAndUntouched(t *testing.T) {
	a, _ := Lookup("gemini")
	for name, content := range map[string]string{
		"truncated":  `{"hooks": {"BeforeTool": [`,
		"twice":      `{"hooks": {}, "hooks": {}}`,
		"not object": `[1, 2]`,
		"hooks list": `{"hooks": []}`,
		"comment":    `{"a": 1 /* open`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := Install(a, path, testHook)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Contains(t, err.Error(), path)
			_, err = Remove(a, path)
			if name != "hooks list" {
				require.ErrorAs(t, err, &pe)
			}
			b, _ := os.ReadFile(path)
			require.Equal(t, content, string(b))
		})
	}
}

func TestMixedEntryIsReportedNotTouched(t *testing.T) {
	a, _ := Lookup("codex")
	path := filepath.Join(t.TempDir(), "hooks.json")
	src := `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "cordon hook codex"}, {"type": "command", "command": "lint"}]}]}}`
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	c, err := Remove(a, path)
	require.NoError(t, err)
	require.False(t, c.Changed())
	require.Equal(t, []string{"cordon hook codex"}, c.Mixed)
}

func TestSymlinkedSettingsStayLinked(t *testing.T) {
	a, _ := Lookup("claude-code")
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles-settings.json")
	require.NoError(t, os.WriteFile(real, []byte("{}\n"), 0o600))
	link := filepath.Join(dir, "settings.json")
	require.NoError(t, os.Symlink(real, link))
	apply(t)(Install(a, link, testHook))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.Equal(t, os.ModeSymlink, fi.Mode().Type())
	cmds, err := Commands(a, real)
	require.NoError(t, err)
	require.Len(t, cmds, 2)
}

func TestCordonHook(t *testing.T) {
	for cmd, want := range map[string]string{
		"cordon hook claude-code --sandbox-bash":      "cordon",
		"'/my dir/cordon' hook codex":                 "/my dir/cordon",
		`"/a/b/cordon" hook gemini --audit "$HOME/x"`: "/a/b/cordon",
		`/usr/bin/cord\on hook copilot`:               "/usr/bin/cordon",
		"cordon run -- x":                             "",
		"/usr/bin/cordonx hook claude-code":           "",
		"echo cordon hook":                            "",
		"cordon":                                      "",
		"cordon hook":                                 "cordon",
		"'unterminated/cordon hook":                   "",
	} {
		bin, _, ok := CordonHook(cmd)
		require.Equal(t, want != "", ok, cmd)
		require.Equal(t, want, bin, cmd)
	}
	require.Equal(t, "'/my dir/cordon' hook codex --audit /l", Hook{Cordon: "/my dir/cordon", Audit: "/l"}.Command("codex"))
}

func TestDiffShape(t *testing.T) {
	d := unified("a/f", "b/f", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n")
	require.Equal(t, "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n", d)
}

func TestDisabled(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	cc, _ := Lookup("claude-code")
	gm, _ := Lookup("gemini")
	cx, _ := Lookup("codex")
	require.Contains(t, Disabled(cc, write("c/settings.json", `{"disableAllHooks": true}`)), "disableAllHooks")
	require.Empty(t, Disabled(cc, write("c2/settings.json", `{"disableAllHooks": false}`)))
	require.Contains(t, Disabled(gm, write("g/settings.json", `{"hooksConfig": {"enabled": false}}`)), "enabled")
	require.Contains(t, Disabled(gm, write("g2/settings.json", `{"hooksConfig": {"disabled": ["x", "cordon"]}}`)), "hooksConfig.disabled")
	hooks := write("x/hooks.json", "{}")
	require.Empty(t, Disabled(cx, hooks))
	write("x/config.toml", "model = \"o3\"\n[features]\nweb = true\nhooks = false # off\n")
	require.Contains(t, Disabled(cx, hooks), "config.toml")
	write("x/config.toml", "[features]\nhooks = true\n[other]\nhooks = false\n")
	require.Empty(t, Disabled(cx, hooks))
}

func TestTOMLFalse(t *testing.T) {
	want := []string{"features", "hooks"}
	for _, src := range []string{
		"features = { hooks = false }\n",
		"[\"features\"]\nhooks = false\n",
		"[features]\n'hooks' = false\n",
		"features . hooks = false\n",
		"features.\"hooks\"=false",
		"[ 'features' ] # t\r\nhooks = false\r\n",
		"[features]\n\"\\u0068ooks\" = false\n",
		"a = '''x\n[b]'''\nfeatures = { web = { x = 1 }, hooks = false }\n",
		"args = [\n  \"x\", # c\n  { hooks = false },\n]\n[features]\nhooks = false\n",
	} {
		off, err := tomlFalse(src, want)
		require.NoError(t, err, "%q", src)
		require.True(t, off, "%q", src)
	}
	for _, src := range []string{
		"[features]\nhooks = true\n",
		"[other]\nhooks = false\n",
		"[a.features]\nhooks = false\n",
		"x = { features = { hooks = false } }\n",
		"args = [ { features = { hooks = false } } ]\n",
		"s = \"features.hooks = false\"\n",
		"m = \"\"\"\n[features]\nhooks = false\n\"\"\"\n",
	} {
		off, err := tomlFalse(src, want)
		require.NoError(t, err, "%q", src)
		require.False(t, off, "%q", src)
	}
	for _, src := range []string{"features = [\n", "[features\nhooks = false\n", "a = \"x\nb\"\n", "k = \"\\q\"\n", "= false\n"} {
		_, err := tomlFalse(src, want)
		require.Error(t, err, "%q", src)
	}
}

func TestExact(t *testing.T) {
	for _, h := range []Hook{{Cordon: "/usr/bin/cordon"}, {Cordon: "/o p/cordon", SandboxBash: true, AllowSandboxed: true, Audit: "/a b/log"}} {
		got, ok := Exact(h.Command("codex"), "codex")
		require.True(t, ok, h.Command("codex"))
		require.Equal(t, h, got)
	}
	for _, c := range []string{
		"/usr/bin/cordon hook codex; exit 0", "/usr/bin/cordon hook codex || true", "/usr/bin/cordon hook codex >/dev/null",
		"/usr/bin/cordon hook codex --x", "/usr/bin/cordon hook gemini", "cordon hook codex", "/usr/bin/cordon  hook codex",
		"/usr/bin/cordon hook codex --audit", "/usr/bin/cordon hook codex\nexit 0",
	} {
		_, ok := Exact(c, "codex")
		require.False(t, ok, c)
	}
}

func TestTOMLMultiLineQuotes(t *testing.T) {
	off, err := tomlFalse("a = \"\"\"x\"\"\"\"\"\n[features]\nhooks = false\n", []string{"features", "hooks"})
	require.NoError(t, err)
	require.True(t, off)
}

func TestManagedHooksOnly(t *testing.T) {
	cc, _ := Lookup("claude-code")
	dir := t.TempDir()
	managed := filepath.Join(dir, "managed-settings.json")
	require.NoError(t, os.WriteFile(managed, []byte(`{"allowManagedHooksOnly": true}`), 0o644))
	require.Contains(t, offIn(cc, managed), "allowManagedHooksOnly")
	other := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"allowManagedHooksOnly": true}`), 0o644))
	require.Empty(t, offIn(cc, other), "only the managed file's setting counts")
}

// TestTOMLInvalidIsNotOK: a value TOML does not know (a misspelt false)
// is an error, so doctor says the file may turn hooks off instead of ok.
func TestTOMLInvalidIsNotOK(t *testing.T) {
	for _, src := range []string{"[features]\nhooks = fals\n", "[features]\nhooks = False\n", "hooks = false\nhooks = true\n"} {
		_, err := tomlFalse(src, []string{"features", "hooks"})
		require.Error(t, err, "%q", src)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[features]\nhooks = fals\n"), 0o644))
	cx, _ := Lookup("codex")
	require.Contains(t, Disabled(cx, filepath.Join(dir, "hooks.json")), "has TOML cordon cannot read")
}

// Codex's hash of a command hook, held against the one Codex 0.171's
// app-server (hooks/list currentHash) gave for this hook.
func TestCodexHookHash(t *testing.T) {
	m := "Bash|apply_patch"
	got, ok := codexHookHash("pre_tool_use", &m, []byte(`{"type":"command","command":"/work/wt/hooks/bin/cordon hook codex --sandbox-bash"}`))
	require.True(t, ok)
	require.Equal(t, "sha256:6f9e4feb8c7b43280b33cfa9663c131a49353ba0f98ac1eec7a0f74728f7730d", got)
	same, _ := codexHookHash("pre_tool_use", &m, []byte(`{"type":"command","command":"/work/wt/hooks/bin/cordon hook codex --sandbox-bash","timeout":600,"async":false}`))
	require.Equal(t, got, same, "the defaults are the normalized form")
	_, ok = codexHookHash("pre_tool_use", &m, []byte(`{"type":"command","command":"x","statusMessage":"s"}`))
	require.False(t, ok, "a field cordon does not normalize is not hashed")
}
