package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fixture makes a temporary tree from a map of relative path to content
// ("/" suffix: a directory; "-> T": a symlink to T) and returns its
// canonical root.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for rel, content := range files {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		switch {
		case strings.HasSuffix(rel, "/"):
			require.NoError(t, os.MkdirAll(p, 0o755))
		case strings.HasPrefix(content, "-> "):
			require.NoError(t, os.Symlink(strings.TrimPrefix(content, "-> "), p))
		default:
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
	}
	return root
}

// repo is the shape of a git directory under prefix.
func repo(prefix string, m map[string]string) map[string]string {
	m[prefix+"HEAD"] = "ref: refs/heads/main\n"
	m[prefix+"config"] = "[core]\n"
	m[prefix+"objects/"] = ""
	m[prefix+"refs/heads/"] = ""
	m[prefix+"hooks/"] = ""
	m[prefix+"info/"] = ""
	return m
}

func canon(t *testing.T, dir string, opt Options) *policy.Canonical {
	t.Helper()
	if opt.Home == "" {
		opt.Home = t.TempDir()
	}
	p, err := Preset(dir, opt)
	require.NoError(t, err)
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	return c
}

func TestGitDirectoriesReadOnlyAsAWhole(t *testing.T) {
	ws := fixture(t, repo(".git/", map[string]string{
		"sub/.git":             "gitdir: ../.git/modules/sub\n",
		"src/main.go":          "package main\n",
		"vendor/lib/.git/":     "",
		"vendor/lib/.git/HEAD": "ref: refs/heads/main\n",
		"tools/x.git/HEAD":     "ref: refs/heads/main\n",
		"tools/x.git/objects/": "",
		"tools/x.git/refs/":    "",
		"src/planted/HEAD":     "ref: refs/heads/main\n",
		"src/planted/objects/": "",
		"src/planted/refs/":    "",
	}))
	c := canon(t, ws, Options{})
	notes := strings.Join(c.Notes(), "\n")
	require.Contains(t, notes, "src/planted has the shape of a git directory")
	require.NotContains(t, notes, "x.git has the shape", "a bare repository named as one is not news")
	require.False(t, c.Access(filepath.Join(ws, "src/planted/config"), policy.Write))
	for rel, write := range map[string]bool{
		"src/main.go":                       true,
		".git/index":                        false, // no gitlink can be added
		".git/commondir":                    false,
		".git/config.worktree":              false,
		".git/modules/sub/hooks/x":          false, // nor a submodule gitdir planted
		".git/worktrees/w/commondir":        false,
		".git/objects/info/alternates":      false,
		".git/rebase-merge/git-rebase-todo": false,
		"sub/.git":                          false,
		"vendor/lib/.git/commondir":         false,
		"vendor/lib/.gitmodules":            false,
		"vendor/lib/src.go":                 true,
		"tools/x.git/config":                false, // a git directory by its shape
		"tools/x.git/objects/pack/p":        false,
	} {
		require.Equal(t, write, c.Access(filepath.Join(ws, rel), policy.Write), rel)
	}
}

func TestGitWritesProtectWhatGitObeys(t *testing.T) {
	m := repo(".git/", map[string]string{
		".git/worktrees/w/commondir": "../..\n",
		".git/worktrees/w/gitdir":    "/somewhere/w/.git\n",
		".git/worktrees/w/index":     "",
	})
	ws := fixture(t, m)
	c := canon(t, ws, Options{GitWrites: true})
	for rel, write := range map[string]bool{
		".git/index":                 true, // commits work
		".git/objects/ab/cd":         true,
		".git/refs/heads/main":       true,
		".git/config":                false,
		".git/hooks/pre-commit":      false,
		".git/modules/sub/config":    false,
		".git/info/attributes":       false,
		".git/worktrees/w/commondir": false,
		".git/worktrees/w/gitdir":    false,
		".git/worktrees/w/index":     true,
	} {
		require.Equal(t, write, c.Access(filepath.Join(ws, rel), policy.Write), rel)
	}
	// Absent files are not mount points: git refuses a commondir that is
	// a directory. The known limit of --allow-git-writes.
	require.True(t, c.Access(filepath.Join(ws, ".git/commondir"), policy.Write))
}

// A pointer planted in the workspace never opens what the policy denies
// (docs/threat-model.md, class 11).
func TestDerivedRootsOnlyRestrict(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{".ssh", ".kube"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(home, d, "config"), []byte("secret"), 0o600))
	}
	ws := fixture(t, repo(".git/", map[string]string{
		".git/commondir": home + "/.kube\n",
		"lib/.git":       "gitdir: " + home + "/.ssh\n",
		"deep/x/.git":    "gitdir: ../../../outside-and-missing\n",
		"linked/.git":    "-> " + home + "/.ssh",
		"dangling/.git":  "-> /nonexistent/gitdir",
	}))
	for _, writes := range []bool{false, true} {
		p, err := Preset(ws, Options{Home: home, UserHome: home, GitWrites: writes})
		require.NoError(t, err, "a hostile or dangling nested .git does not stop the launch")
		c, err := policy.Canonicalize(p)
		require.NoError(t, err)
		for _, f := range []string{".ssh/config", ".kube/config", ".kube/hooks", ".ssh/hooks/x"} {
			require.False(t, c.Access(filepath.Join(home, f), policy.Read), "writes=%v: %s readable", writes, f)
			r, _ := c.DecidingRoot(filepath.Join(home, f))
			require.Equal(t, policy.Denied, r.Kind, f)
		}
		for _, r := range c.Roots() {
			require.True(t, within(r.Path, ws) || within(r.Path, home) && r.Kind == policy.Denied || r.Path == PrivateTmpDir(ws) || r.Path == PrivateCacheDir(ws),
				"root %s (%s) outside the workspace: a stub there, or a carve-out", r.Path, r.Kind)
		}
		notes := strings.Join(c.Notes(), "\n")
		require.Contains(t, notes, "lib/.git names "+filepath.Join(home, ".ssh")+", outside "+ws+", which is not a git directory: not followed")
		require.Contains(t, notes, "dangling/.git is a symlink to a missing")
	}
}

// Only where writes are allowed: a derived root never overrides a root the
// caller named, and is not kept where writes are denied anyway.
func TestDerivedRootMeetsExplicitRoots(t *testing.T) {
	ws := fixture(t, repo(".git/", map[string]string{}))
	p, err := Preset(ws, Options{Home: t.TempDir()})
	require.NoError(t, err)
	p.DeniedRoots = append(p.DeniedRoots, filepath.Join(ws, ".vscode"))
	p.Merge(policy.FsSandboxPolicy{WritableRoots: []string{filepath.Join(ws, ".git")}})
	c, err := policy.Canonicalize(p)
	require.NoError(t, err, "a derived root does not clash with an explicit one")
	require.False(t, c.Access(filepath.Join(ws, ".vscode/x"), policy.Read))
	require.True(t, c.Access(filepath.Join(ws, ".git/index"), policy.Write), "the caller asked")

	var q policy.FsSandboxPolicy
	q.RestrictWrites = true
	q.Protect("/nonexistent/outside")
	c, err = policy.Canonicalize(q)
	require.NoError(t, err)
	require.Empty(t, c.Roots(), "no root, hence no stub, where writes are denied anyway")

	q = policy.FsSandboxPolicy{DeniedRoots: []string{"/vault"}}
	q.Protect("/vault/config")
	c, err = policy.Canonicalize(q)
	require.NoError(t, err)
	require.False(t, c.Access("/vault/config", policy.Read), "no read-only carve-out in a denied root")
	require.Contains(t, strings.Join(c.Notes(), "\n"), "ignored /vault/config, derived from workspace content: it lies in denied root /vault")
}

func TestWorkspaceWithoutGitKeepsRepositoriesFromBeingPlanted(t *testing.T) {
	ws := fixture(t, map[string]string{"src/main.go": "x"})
	c := canon(t, ws, Options{})
	for _, rel := range []string{".git", ".git/config", "HEAD"} {
		require.False(t, c.Access(filepath.Join(ws, rel), policy.Write), rel)
	}
	require.True(t, c.Access(filepath.Join(ws, "objects"), policy.Write), "HEAD alone keeps git from taking the top for a repository")

	// A bare repository as the workspace: what git obeys in it.
	bare := fixture(t, repo("", map[string]string{}))
	c = canon(t, bare, Options{})
	require.False(t, c.Access(filepath.Join(bare, "config"), policy.Write))
	require.False(t, c.Access(filepath.Join(bare, "hooks/post-update"), policy.Write))
	require.True(t, c.Access(filepath.Join(bare, "objects/ab"), policy.Write))
}

func TestLinkedWorktreeWorkspace(t *testing.T) {
	main := fixture(t, repo(".git/", map[string]string{
		".git/worktrees/w/HEAD":      "ref: refs/heads/w\n",
		".git/worktrees/w/commondir": "../..\n",
	}))
	ws := fixture(t, map[string]string{".git": "gitdir: " + main + "/.git/worktrees/w\n"})
	p, err := Preset(ws, Options{Home: t.TempDir()})
	require.NoError(t, err)
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	require.Empty(t, c.Notes(), "a pointer to a real git directory outside is not hostile: it is read-only anyway")
	require.False(t, c.Access(filepath.Join(main, ".git/config"), policy.Write))
	require.False(t, c.Access(filepath.Join(ws, ".git"), policy.Write))

	// With the main repository writable too, its own scan protects it.
	prot, err := Protections(main, Options{})
	require.NoError(t, err)
	p.Merge(prot)
	p.WritableRoots = append(p.WritableRoots, main)
	c, err = policy.Canonicalize(p)
	require.NoError(t, err)
	require.False(t, c.Access(filepath.Join(main, ".git/config"), policy.Write))
	require.False(t, c.Access(filepath.Join(main, ".git/worktrees/w/commondir"), policy.Write))
	require.True(t, c.Access(filepath.Join(main, "src.go"), policy.Write))
}

// The submodules .gitmodules names are protected whatever the scan's
// bounds.
func TestSubmodulePathsOutsideTheScan(t *testing.T) {
	defer func(n int) { scanDirs = n }(scanDirs)
	scanDirs = 1 // reads the top only
	ws := fixture(t, repo(".git/", map[string]string{
		".gitmodules":         "[submodule \"a\"]\n\tpath = third/party/a\n\turl = ../a\n",
		"third/party/a/.git/": "",
	}))
	c := canon(t, ws, Options{})
	require.False(t, c.Access(filepath.Join(ws, "third/party/a/.git/config"), policy.Write))
}

func TestHardLinkedGitConfigIsNoted(t *testing.T) {
	ws := fixture(t, repo("lib/.git/", map[string]string{".git/": ""}))
	require.NoError(t, os.Link(filepath.Join(ws, "lib/.git/config"), filepath.Join(ws, "x")))
	c := canon(t, ws, Options{})
	require.Contains(t, strings.Join(c.Notes(), "\n"), "lib/.git/config has 2 hard links")
}

// What the user's own git config makes git read or run from the work tree
// is protected: a hooks directory in it (husky), an included config
// file, a driver or alias that runs a script of the repository.
func TestConfigReferencesIntoTheWorkTree(t *testing.T) {
	m := repo(".git/", map[string]string{
		".husky/_/h":              "#!/bin/sh\n",
		".husky/pre-commit":       "npm test\n",
		"shared.gitconfig":        "[core]\n",
		"tools/conv.sh":           "#!/bin/sh\n",
		"scripts/st.sh":           "#!/bin/sh\n",
		".pre-commit-config.yaml": "repos: []\n",
		"src/main.go":             "x",
	})
	m[".git/config"] = "[core]\n\thooksPath = .husky/_\n\tfsmonitor = /usr/bin/true # not ours\n" +
		"[include]\n\tpath = ../shared.gitconfig\n" +
		"[diff \"conv\"]\n\ttextconv = \"./tools/conv.sh\" --flag\n" +
		"[alias]\n\tst = !scripts/st.sh status\n"
	ws := fixture(t, m)
	for _, writes := range []bool{false, true} {
		c := canon(t, ws, Options{GitWrites: writes})
		for rel, write := range map[string]bool{
			".husky/pre-commit":       false,
			".husky/_/h":              false,
			"shared.gitconfig":        false,
			"tools/conv.sh":           false,
			"tools/other.sh":          true,
			"scripts/st.sh":           false,
			".pre-commit-config.yaml": false,
			"src/main.go":             true,
		} {
			require.Equal(t, write, c.Access(filepath.Join(ws, rel), policy.Write), "writes=%v %s", writes, rel)
		}
	}
}

func TestConfigValue(t *testing.T) {
	for in, want := range map[string]string{
		` "a b" # c`:   "a b",
		` x ; y`:       "x",
		` "a\"b"`:      `a"b`,
		` !sh -c "x;"`: `!sh -c x;`,
	} {
		require.Equal(t, want, configValue(in), in)
	}
}

// A submodule not initialised yet cannot be given a .git.
func TestUninitialisedSubmoduleGetsNoDotGit(t *testing.T) {
	ws := fixture(t, repo(".git/", map[string]string{
		".gitmodules": "[submodule \"s\"]\n\tpath = libs/s\n\turl = ../s\n",
		"libs/s/":     "",
	}))
	for _, writes := range []bool{false, true} {
		c := canon(t, ws, Options{GitWrites: writes})
		require.False(t, c.Access(filepath.Join(ws, "libs/s/.git"), policy.Write))
		require.True(t, c.Access(filepath.Join(ws, "libs/s/code.go"), policy.Write))
	}
}

// TestPlantedSpecialFilesDoNotStall: a sandbox can plant, in a repository
// it makes in the workspace, FIFOs and links to devices where the git
// guard reads (.gitmodules, config, commondir, a .git file). Opening a
// FIFO would wait for a writer that never comes, and SIGTERM would not
// end the wait: every later launch there would hang. The guard reads
// them without waiting and within a bound, and the launch goes on with
// the repositories protected.
func TestPlantedSpecialFilesDoNotStall(t *testing.T) {
	m := map[string]string{"a/.gitmodules": "", "b/.git": "", "c/.git/config": "-> /dev/zero"}
	repo("a/.git/", m)
	repo("c/.git/", m)
	m["d/.git/commondir"] = ""
	repo("d/.git/", m)
	root := fixture(t, m)
	for _, p := range []string{"a/.gitmodules", "b/.git", "d/.git/commondir"} {
		require.NoError(t, os.Remove(filepath.Join(root, p)))
		require.NoError(t, unix.Mkfifo(filepath.Join(root, p), 0o644))
	}
	done := make(chan error, 1)
	var p policy.FsSandboxPolicy
	go func() {
		var err error
		p, err = Preset(root, Options{Home: t.TempDir()})
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the workspace's protections are still being derived after 20 s: a planted file stalled them")
	}
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	for _, want := range []string{"a/.git/config", "a/.gitmodules", "b/.git", "c/.git/hooks", "d/.git/commondir"} {
		require.False(t, c.Access(filepath.Join(root, want), policy.Write), want)
	}
}

// TestGitReadsRefuseSpecialFiles: the git guard's reads refuse a link to
// a device unopened, and read a FIFO as empty instead of waiting on it.
func TestGitReadsRefuseSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := filepath.Join(dir, "fifo"), filepath.Join(dir, "zero")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Symlink("/dev/zero", zero))
	_, err := readFile(zero)
	require.ErrorIs(t, err, boundedread.ErrNotRegular)
	b, err := readFile(fifo)
	require.NoError(t, err, "a FIFO reads as empty")
	require.Empty(t, b)
}
