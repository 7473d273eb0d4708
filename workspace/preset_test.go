package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/policy"
)

func TestWorkspacePreset(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub", "inner"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "elsewhere-gitdir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub", "inner", ".git"), []byte("gitdir: ../../elsewhere-gitdir\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))

	p, err := Preset(ws, Options{Home: home, AllowRead: []string{filepath.Join(home, ".aws")}})
	require.NoError(t, err)
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	rws, _ := filepath.EvalSymlinks(ws)
	rhome, _ := filepath.EvalSymlinks(home)
	require.True(t, c.RestrictWrites())
	for path, write := range map[string]bool{
		"src/main.go":                   true,
		".git/objects/ab":               false, // every gitdir is read-only as a whole by default
		".git/hooks/pre-commit":         false,
		".git/config":                   false,
		".bashrc":                       true, // not HOME: nothing sources it
		".vscode/settings.json":         false,
		".mcp.json":                     false,
		"sub/inner/.git":                false,
		"elsewhere-gitdir/hooks/post-x": false,
		"elsewhere-gitdir/config":       false,
		"elsewhere-gitdir/objects/x":    false,
		"sub/inner/.git-not-really":     true,
	} {
		require.Equal(t, write, c.Access(filepath.Join(rws, path), policy.Write), path)
	}
	require.False(t, c.Access(filepath.Join(rhome, ".ssh", "id_ed25519"), policy.Read))
	require.True(t, c.Access(filepath.Join(rhome, ".aws", "credentials"), policy.Read), "--allow-read keeps it readable")
	require.True(t, c.Access(PrivateTmpDir(rws)+"/x", policy.Write))
	require.True(t, c.Access(PrivateCacheDir(rws)+"/go-build/x", policy.Write))
	require.True(t, strings.HasPrefix(PrivateCacheDir(rws), state.Path()+"/"+state.Cache+"/"))
	require.True(t, strings.HasPrefix(PrivateTmpDir(rws), state.Path()+"/"))
}

func TestAgentsPreset(t *testing.T) {
	p, err := Agents("/agents", "child", "boss")
	require.NoError(t, err)
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	require.False(t, c.Access("/agents/other/x", policy.Read))
	require.True(t, c.Access("/agents/child/x", policy.Write))
	require.True(t, c.Access("/agents/boss/x", policy.Read))
	require.False(t, c.Access("/agents/boss/x", policy.Write))
	for _, bad := range []string{"", "..", "a/b"} {
		_, err := Agents("/agents", bad, "")
		require.ErrorContains(t, err, "agent id")
	}
}

func TestWorkspacePresetProtectsShellFilesOfContainedHome(t *testing.T) {
	ws := t.TempDir()
	home := filepath.Join(ws, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	p, err := Preset(ws, Options{Home: home})
	require.NoError(t, err)
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	rhome, _ := filepath.EvalSymlinks(home)
	require.False(t, c.Access(filepath.Join(rhome, ".bashrc"), policy.Write))
	require.False(t, c.Access(filepath.Join(rhome, ".config/git/config"), policy.Write))
	require.True(t, c.Access(filepath.Join(rhome, "notes.txt"), policy.Write))
}

func TestWorkspacePresetRefusesLinkedProtectedNames(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(ws, ".vscode")))
	_, err := Preset(ws, Options{Home: t.TempDir()})
	require.ErrorContains(t, err, ".vscode is a symlink")
}

func TestWorkspacePresetRefusesLinkedCredentialStoreInWritableHome(t *testing.T) {
	ws := t.TempDir()
	home := filepath.Join(ws, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(home, ".ssh")))
	_, err := Preset(ws, Options{Home: home})
	require.ErrorContains(t, err, ".ssh is a symlink")
	_, err = Preset(t.TempDir(), Options{Home: home})
	require.NoError(t, err, "outside the workspace the link cannot be touched: its target is denied")
}

// TestWorkspacePresetSkipsStateDirectory: with cordon's state directory
// inside the workspace (HOME as the workspace), nothing in it becomes a
// root: neither a mask of mode 0111 (closed to a normal user) nor a
// repository or a configuration a sandbox left in its TMPDIR. The
// launcher refuses a root there, so each would fail every later launch.
func TestWorkspacePresetSkipsStateDirectory(t *testing.T) {
	ws := t.TempDir()
	sd := filepath.Join(ws, ".local", "state", "cordon")
	t.Setenv(state.EnvDir, sd)
	mask := filepath.Join(sd, state.Run, "masks", "m")
	require.NoError(t, os.MkdirAll(mask, 0o700))
	require.NoError(t, os.Chmod(mask, 0o111))
	t.Cleanup(func() { os.Chmod(mask, 0o700) })
	require.NoError(t, os.MkdirAll(filepath.Join(sd, state.Tmp, "abc", "repo", ".git"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(sd, state.Tmp, "abc", "x", ".vscode"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "project", ".git"), 0o755))

	for _, cache := range []string{"", t.TempDir()} {
		for range 2 { // the second answered from the scan's record
			p, err := Preset(ws, Options{Home: ws, ScanCache: cache})
			require.NoError(t, err)
			c, err := policy.Canonicalize(p)
			require.NoError(t, err)
			rws, _ := filepath.EvalSymlinks(ws)
			rsd := filepath.Join(rws, ".local", "state", "cordon")
			for _, r := range c.Roots() {
				if r.Path == PrivateTmpDir(rws) || r.Path == PrivateCacheDir(rws) {
					continue // the ones handed in
				}
				require.False(t, r.Path == rsd || strings.HasPrefix(r.Path, rsd+"/"), "root %s (%s) in the state directory", r.Path, r.Kind)
			}
			require.False(t, c.Access(filepath.Join(rws, "project", ".git", "config"), policy.Write), "the scan still finds the workspace's repositories")
		}
	}
}

// TestCredentialStoresOfBothHomes: the stores of the password database's
// home are denied whatever HOME says (another directory, or none), as are
// $HOME's; the agents' and gh's token files are among them.
func TestCredentialStoresOfBothHomes(t *testing.T) {
	ws, home, real := t.TempDir(), t.TempDir(), t.TempDir()
	for _, h := range []string{home, real} {
		for _, f := range []string{".ssh/id_ed25519", ".config/gh/hosts.yml", ".claude/.credentials.json", ".codex/auth.json",
			".gemini/oauth_creds.json", ".copilot/config.json", ".docker/config.json", ".kube/config", ".netrc", ".config/gh/config.yml"} {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(h, f)), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(h, f), []byte("x"), 0o600))
		}
	}
	for _, h := range []string{home, "/nonexistent-home", ""} {
		p, err := Preset(ws, Options{Home: h, UserHome: real})
		require.NoError(t, err, h)
		c, err := policy.Canonicalize(p)
		require.NoError(t, err)
		homes := []string{real}
		if h == home {
			homes = append(homes, home)
		}
		for _, hh := range homes {
			rh, _ := filepath.EvalSymlinks(hh)
			for _, f := range []string{".ssh/id_ed25519", ".config/gh/hosts.yml", ".claude/.credentials.json", ".codex/auth.json",
				".gemini/oauth_creds.json", ".copilot/config.json", ".docker/config.json", ".kube/config", ".netrc"} {
				require.False(t, c.Access(filepath.Join(rh, f), policy.Read), "HOME=%q: %s/%s readable", h, hh, f)
			}
			require.True(t, c.Access(filepath.Join(rh, ".config/gh/config.yml"), policy.Read), "beside a store: readable")
		}
	}
}
