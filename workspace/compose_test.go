package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
)

func composeFixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"ws/bin", "ws/home", "agents/a1/.git/hooks", "agents/p0", "elsewhere/bin", "denied/bin"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	return dir
}

func TestComposeAgentDirProtected(t *testing.T) {
	dir := composeFixture(t)
	for _, ws := range []string{"", filepath.Join(dir, "ws")} {
		c, err := Compose(Spec{AgentsRoot: filepath.Join(dir, "agents"), Agent: "a1", Parent: "p0", Workspace: ws, Home: filepath.Join(dir, "home-none")})
		require.NoError(t, err)
		a1 := filepath.Join(dir, "agents/a1")
		require.True(t, c.Canonical.Access(a1+"/notes", policy.Write))
		for _, p := range []string{".git/hooks/pre-commit", ".git/config", ".vscode/tasks.json", ".envrc", ".mcp.json"} {
			require.False(t, c.Canonical.Access(filepath.Join(a1, p), policy.Write), "workspace %q: %s writable", ws, p)
		}
		require.False(t, c.Canonical.Access(filepath.Join(dir, "agents/p0/x"), policy.Write))
		require.False(t, c.Canonical.Access(filepath.Join(dir, "agents/other"), policy.Read))
	}
}

func TestComposeRunsNext(t *testing.T) {
	dir := composeFixture(t)
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "ws/home")
	exe := filepath.Join(dir, "ws/bin/cordon")
	path := ws + "/bin:" + ws + "/.tools/bin:" + dir + "/elsewhere/bin:" + dir + "/denied/bin:.:relative/bin"
	c, err := Compose(Spec{Workspace: ws, Home: home, Deny: []string{dir + "/denied"}, Executables: []string{exe}, Path: path})
	require.NoError(t, err)
	k := c.Canonical
	for _, p := range []string{exe, ws + "/bin/ls", ws + "/.tools/bin/x", home + "/.claude.json", home + "/.claude/settings.json",
		home + "/.codex/config.toml", home + "/go/bin/x", home + "/.cargo/bin/x",
		home + "/.copilot/hooks/x.json", home + "/.cache/copilot/pkg/linux-x64/1.0.102/index.js"} {
		require.False(t, k.Access(p, policy.Write), "%s writable", p)
	}
	require.True(t, k.Access(ws+"/src/main.go", policy.Write))
	// Restrict only: a denied PATH dir stays denied, one outside every
	// writable root adds no root.
	require.False(t, k.Access(dir+"/denied/bin/x", policy.Read))
	require.False(t, k.IsRoot(dir+"/elsewhere/bin"))

	// --writable-path-dir opts a directory out; a root named writable stays so.
	c, err = Compose(Spec{Workspace: ws, Home: home, Path: path, WritablePathDirs: []string{ws + "/bin"}, Writable: []string{ws + "/.tools/bin"}})
	require.NoError(t, err)
	require.True(t, c.Canonical.Access(ws+"/bin/tool", policy.Write))
	require.True(t, c.Canonical.Access(ws+"/.tools/bin/tool", policy.Write))

	// Protect (an audit log): read-only where writable, denied stays denied.
	c, err = Compose(Spec{Workspace: ws, Home: home, Deny: []string{dir + "/denied"}, Protect: []string{ws + "/.cordon/log.jsonl", dir + "/denied/log"}})
	require.NoError(t, err)
	require.False(t, c.Canonical.Access(ws+"/.cordon/log.jsonl", policy.Write))
	require.True(t, c.Canonical.Access(ws+"/.cordon/other", policy.Write))
	require.False(t, c.Canonical.Access(dir+"/denied/log", policy.Read))

	// HOME outside every writable root: nothing added under it.
	c, err = Compose(Spec{Workspace: ws, Home: filepath.Join(dir, "elsewhere")})
	require.NoError(t, err)
	require.False(t, c.Canonical.IsRoot(filepath.Join(dir, "elsewhere/.claude.json")))
}

func TestComposeErrors(t *testing.T) {
	dir := composeFixture(t)
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Deny: []string{"rel"}}, `--deny "rel": give an absolute path`},
		{Spec{Workspace: "ws"}, `--workspace "ws": give an absolute path`},
		{Spec{Files: []string{"pol.json"}}, `--policy "pol.json": give an absolute path`},
		{Spec{AllowRead: []string{dir}}, "--allow-read needs --workspace"},
		{Spec{Agent: "a"}, "--agent and --parent need --agents-root"},
		{Spec{WritablePathDirs: []string{""}}, `--writable-path-dir "": give an absolute path`},
		{Spec{AgentsRoot: dir + "/agents", Agent: "../x"}, `agent id "../x": must be one path component`},
	} {
		_, err := Compose(tc.s)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestComposeProtectsPolicyFile: a policy file kept in the workspace is
// read-only in the launch it composes; it decides the next launch too.
func TestComposeProtectsPolicyFile(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	file := filepath.Join(ws, "cordon.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"readonlyRoots":["/etc"]}`), 0o644))
	c, err := Compose(Spec{Files: []string{file}, Workspace: ws, Home: t.TempDir()})
	require.NoError(t, err)
	require.True(t, c.Canonical.Access(filepath.Join(ws, "main.go"), policy.Write))
	require.False(t, c.Canonical.Access(file, policy.Write), "the policy file is read-only")
}

// TestComposeRefusesPolicyLinkTheSandboxCouldRepoint: the file is
// read-only, but a link to it in the workspace could be re-pointed at a
// weaker policy for the next launch; a link outside is fine.
func TestComposeRefusesPolicyLinkTheSandboxCouldRepoint(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, etc := filepath.Join(base, "ws"), filepath.Join(base, "etc")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "policies"), 0o755))
	require.NoError(t, os.MkdirAll(etc, 0o755))
	real := filepath.Join(ws, "policies", "real.json")
	require.NoError(t, os.WriteFile(real, []byte(`{"readonlyRoots":["/etc"]}`), 0o644))
	inside, outside := filepath.Join(ws, "cordon.json"), filepath.Join(etc, "cordon.json")
	require.NoError(t, os.Symlink("policies/real.json", inside))
	require.NoError(t, os.Symlink(real, outside))

	_, err = Compose(Spec{Files: []string{inside}, Workspace: ws, Home: t.TempDir()})
	require.ErrorContains(t, err, "goes through the symbolic link "+inside)
	c, err := Compose(Spec{Files: []string{outside}, Workspace: ws, Home: t.TempDir()})
	require.NoError(t, err)
	require.False(t, c.Canonical.Access(real, policy.Write), "what it points at is read-only")
}

// TestComposeMergesPolicyFiles: --policy is repeatable; the files merge
// in order like the root flags (roots add up, restrictWrites holds if one
// asks, network patterns add up before the flags'), and every file gets
// what one file gets: an absolute name, read-only in the sandbox, no
// link the sandbox could re-point. The second of two files was once
// dropped without a word.
func TestComposeMergesPolicyFiles(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	a, b := filepath.Join(ws, "a.json"), filepath.Join(ws, "b.json")
	require.NoError(t, os.WriteFile(a, []byte(`{"deniedRoots":["`+ws+`/secret-a"],"network":{"allowDomains":["a.example"]}}`), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(`{"deniedRoots":["`+ws+`/secret-b"],"readonlyRoots":["`+ws+`/ro"],"restrictWrites":true,"network":{"allowDomains":["b.example"],"denyDomains":["x.b.example"]}}`), 0o644))

	c, err := Compose(Spec{Files: []string{a, b}, Writable: []string{ws}, AllowDomains: []string{"flag.example"}, Home: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, []string{ws + "/secret-a", ws + "/secret-b"}, c.Policy.DeniedRoots)
	require.Contains(t, c.Policy.ReadonlyRoots, ws+"/ro")
	require.True(t, c.Policy.RestrictWrites, "restrictWrites from the second file")
	require.Equal(t, []string{"a.example", "b.example", "flag.example"}, c.Network.AllowText())
	require.Equal(t, []string{"x.b.example"}, c.Network.DenyText())
	for _, f := range []string{a, b} {
		require.False(t, c.Canonical.Access(f, policy.Write), "%s is read-only", f)
	}
	require.True(t, c.Canonical.Access(ws+"/main.go", policy.Write))

	link := filepath.Join(ws, "link.json")
	require.NoError(t, os.Symlink("b.json", link))
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"second relative", []string{a, "b.json"}, `--policy "b.json": give an absolute path`},
		{"second empty", []string{a, ""}, `--policy "": give an absolute path`},
		{"second through a writable link", []string{a, link}, "--policy " + link + ": it goes through the symbolic link " + link},
		{"second malformed", []string{a, filepath.Join(ws, "nope.json")}, "nope.json"},
		{"files disagree", []string{a, writePolicy(t, `{"writableRoots":["`+ws+`/secret-a"]}`)}, "a path may be in only one field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compose(Spec{Files: tt.files, Writable: []string{ws}, Home: t.TempDir()})
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func writePolicy(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(f, []byte(content), 0o644))
	return f
}

// TestComposeHostCachesReadOnly: with HOME in the workspace, the host's
// caches (by default, and where the environment places them) are
// read-only, the private cache writable; a root the caller names for one
// stands.
func TestComposeHostCachesReadOnly(t *testing.T) {
	dir := composeFixture(t)
	home := filepath.Join(dir, "ws", "home")
	env := []string{"HOME=" + home, "GOMODCACHE=" + filepath.Join(dir, "ws", "mods"), "GOENV=off"}
	c, err := Compose(Spec{Workspace: filepath.Join(dir, "ws"), Home: home, Environ: env})
	require.NoError(t, err)
	for _, p := range []string{".cache/go-build/00/x", ".npm/_cacache/x", ".cache/pip/x", ".cargo/registry/src/x", ".local/share/pnpm/store/x"} {
		require.False(t, c.Canonical.Access(filepath.Join(home, p), policy.Write), p)
	}
	require.False(t, c.Canonical.Access(filepath.Join(dir, "ws", "mods", "x"), policy.Write), "GOMODCACHE from the environment")
	require.True(t, c.Canonical.Access(filepath.Join(home, "notes"), policy.Write))
	require.True(t, c.Canonical.Access(c.CacheDir+"/go-build/x", policy.Write))

	mod := filepath.Join(home, "go", "pkg", "mod")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	c, err = Compose(Spec{Workspace: filepath.Join(dir, "ws"), Home: home, Environ: env, Writable: []string{mod}})
	require.NoError(t, err)
	require.True(t, c.Canonical.Access(filepath.Join(mod, "x"), policy.Write), "--writable ~/go/pkg/mod is the caller's word")
}
