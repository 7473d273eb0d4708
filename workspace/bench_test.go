package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

func mkdirs(tb testing.TB, paths []string) {
	tb.Helper()
	for _, p := range paths {
		require.NoError(tb, os.MkdirAll(p, 0o755))
	}
}

func benchCanonicalize(b *testing.B, p policy.FsSandboxPolicy, roots int) {
	c, err := policy.Canonicalize(p)
	require.NoError(b, err)
	require.Len(b, c.Roots(), roots)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Canonicalize(p); err != nil {
			b.Fatal(err)
		}
	}
}

// workspaceFixture is a small git work tree with a few files, and a HOME
// with two credential stores, outside it.
func workspaceFixture(tb testing.TB, files int) (ws, home string) {
	tb.Helper()
	base := tb.TempDir()
	ws, home = filepath.Join(base, "ws"), filepath.Join(base, "home")
	mkdirs(tb, []string{filepath.Join(home, ".ssh"), filepath.Join(ws, ".git", "hooks")})
	require.NoError(tb, os.WriteFile(filepath.Join(home, ".npmrc"), nil, 0o600))
	require.NoError(tb, os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(tb, os.WriteFile(filepath.Join(ws, ".git", "config"), nil, 0o644))
	for i := range files {
		p := filepath.Join(ws, fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("sub%d", i%3), fmt.Sprintf("f%04d.go", i))
		mkdirs(tb, []string{filepath.Dir(p)})
		require.NoError(tb, os.WriteFile(p, nil, 0o644))
	}
	return ws, home
}

// BenchmarkWorkspacePreset is the --workspace preset as a launch runs it:
// resolve the workspace and HOME, the bounded scan for nested repositories,
// the credential stores. Its cost grows with the workspace (up to the scan
// bounds), unlike everything else in a launch.
func BenchmarkWorkspacePreset(b *testing.B) {
	for _, files := range []int{5, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			ws, home := workspaceFixture(b, files)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := workspace.Preset(ws, workspace.Options{Home: home}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonicalizeWorkspace canonicalizes the preset's policy (about
// 15 roots), as every launch does after the preset.
func BenchmarkCanonicalizeWorkspace(b *testing.B) {
	ws, home := workspaceFixture(b, 5)
	p, err := workspace.Preset(ws, workspace.Options{Home: home})
	require.NoError(b, err)
	benchCanonicalize(b, p, len(p.DeniedRoots)+len(p.ReadonlyRoots)+len(p.WritableRoots)+len(p.Derived()))
}

// BenchmarkCompose is what 'cordon run --workspace W' computes before the
// launcher: the preset, the protections of what runs next (a PATH of six
// directories, cordon's executable), and the canonical policy with its
// roots' identities. Compare with BenchmarkWorkspacePreset/files=5 plus
// BenchmarkCanonicalizeWorkspace, the same work before Compose.
func BenchmarkCompose(b *testing.B) {
	ws, home := workspaceFixture(b, 5)
	exe, _ := os.Executable()
	s := workspace.Spec{Workspace: ws, Home: home, Executables: []string{exe},
		Path: home + "/go/bin:" + home + "/.local/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workspace.Compose(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComposeNestedRepos is Compose of a workspace holding 300
// repositories as git init leaves them (50 to a directory, each with a
// config, an index and the 14 hook samples), with a warm scan record:
// what every launch there pays for the scan's check and the git guard.
func BenchmarkComposeNestedRepos(b *testing.B) {
	base := b.TempDir()
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	mkdirs(b, []string{home, filepath.Join(ws, ".git", "hooks")})
	for i := range 300 {
		gd := filepath.Join(ws, fmt.Sprintf("p%02d/r%04d/.git", i/50, i))
		mkdirs(b, []string{filepath.Join(gd, "hooks"), filepath.Join(gd, "objects"), filepath.Join(gd, "refs")})
		for name, body := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": "[core]\n\tbare = false\n", "index": ""} {
			require.NoError(b, os.WriteFile(filepath.Join(gd, name), []byte(body), 0o644))
		}
		for h := range 14 {
			require.NoError(b, os.WriteFile(filepath.Join(gd, "hooks", fmt.Sprintf("hook%d.sample", h)), nil, 0o755))
		}
	}
	// A scan trusts no directory changed within 2 s of it (scancache.go).
	time.Sleep(2100 * time.Millisecond)
	s := workspace.Spec{Workspace: ws, Home: home, ScanCache: filepath.Join(base, "scan")}
	c, err := workspace.Compose(s)
	require.NoError(b, err)
	require.Greater(b, len(c.Policy.ReadonlyRoots), 600)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workspace.Compose(s); err != nil {
			b.Fatal(err)
		}
	}
}
