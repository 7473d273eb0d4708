package policy

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// Names at the top of a writable root that tools run or trust later, outside
// the sandbox (DESIGN.md §2.6). They are protected whether or not they exist:
// a file that does not exist yet is the easiest one to plant.
var (
	// AutoExecNames are protected at the top of every writable root and of
	// every git work tree found in one: files and directories that git,
	// direnv, editors and agents read and obey.
	AutoExecNames = []string{
		".gitmodules", ".envrc", ".mcp.json",
		".vscode", ".idea", ".claude", ".codex", ".gemini",
	}
	// ShellFiles are protected in HOME when a writable root contains it:
	// shells and git read them at every start.
	ShellFiles = []string{
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".bash_aliases", ".bashrc.d", ".zshrc", ".zshenv", ".zprofile",
		".zlogin", ".zlogout", ".config/fish", ".pam_environment",
		".xprofile", ".xsessionrc", ".xinitrc",
		".gitconfig", ".config/git",
		// run at login or by the desktop
		".config/autostart", ".config/systemd", ".config/environment.d",
		// on PATH, or imported at every interpreter start (.pth files,
		// usercustomize.py)
		".local/bin", "bin", ".local/lib",
		// editors and multiplexers run code from their config
		".vimrc", ".vim", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf",
	}
	// CredentialStores under HOME are denied by the workspace preset.
	CredentialStores = []string{
		".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials",
		".docker/config.json", ".kube", ".config/gcloud", ".azure",
		".npmrc", ".pypirc",
	}
)

// Bounds of the scan for nested git repositories: deep enough for vendored
// trees (third_party/a/b/c/lib), small enough that a launch never walks a
// whole home directory. Directories that hold installed packages, never a
// repository the user commits in, are not entered.
const (
	scanDepth   = 10
	scanEntries = 20000
)

var scanSkip = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, "__pycache__": true,
	".tox": true, ".mypy_cache": true, ".pytest_cache": true, ".cache": true,
}

// WorkspaceOptions tune the workspace preset.
type WorkspaceOptions struct {
	// Home is the user's home directory; "" means os.UserHomeDir.
	Home string
	// AllowRead lists credential stores to leave readable.
	AllowRead []string
	// ScanCache, when set, is a private directory (the caller's, mode 0700)
	// where the scan for nested git repositories keeps its result between
	// launches; see scancache.go.
	ScanCache string
}

// Workspace compiles the --workspace preset: dir writable, the private
// TMPDIR writable, restrictWrites, auto-executed files protected at the top
// of the workspace, of nested git repositories and in real gitdirs, and
// credential stores under HOME denied. dir must be absolute.
func Workspace(dir string, opt WorkspaceOptions) (FsSandboxPolicy, error) {
	r := resolver{} // HOME and the workspace are looked up once, not per path
	ws, err := resolveCached(r, dir)
	if err != nil {
		return FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return FsSandboxPolicy{}, fmt.Errorf("workspace %s: not a directory", dir)
	}
	p := FsSandboxPolicy{
		WritableRoots:  []string{ws, PrivateTmpDir(ws)},
		RestrictWrites: true,
	}
	home := opt.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		home, err = resolveCached(r, home)
		if err != nil {
			home = ""
		}
	}
	p.ReadonlyRoots, err = protections(r, ws, home, opt.ScanCache)
	if err != nil {
		return FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	w, ro := platformRoots(r) // macOS: the user's temp and cache folders (userfolders.go)
	p.WritableRoots = append(p.WritableRoots, w...)
	p.ReadonlyRoots = append(p.ReadonlyRoots, ro...)
	if home != "" {
		p.DeniedRoots = credentials(r, home, ws, opt.AllowRead)
		if within(home, ws) {
			// A store reached through a link in a writable HOME is denied
			// at its target, but the link could be swapped for a real
			// ~/.ssh (authorized_keys) from inside.
			var lexical []string
			for _, n := range CredentialStores {
				lexical = append(lexical, filepath.Join(home, n))
			}
			if err := noLinks(r, lexical); err != nil {
				return FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
			}
		}
	}
	return p, nil
}

// Protections lists the read-only roots that guard the auto-executed files
// of writable root root (DESIGN.md §2.6), and the shell files of home when
// root contains it. A protected name that is a symlink is an error.
func Protections(root, home string) ([]string, error) {
	return protections(resolver{}, root, home, "")
}

func protections(r resolver, root, home, cache string) ([]string, error) {
	out := protect(root, cache)
	if home != "" && within(home, root) {
		for _, n := range ShellFiles {
			out = append(out, filepath.Join(home, n))
		}
	}
	return out, noLinks(r, out)
}

// noLinks refuses protected paths that are symlinks. Canonicalizing would
// protect the link's target, while the link itself, a directory entry in a
// writable root, could be replaced from inside the sandbox by a real file
// that host tools then run.
func noLinks(r resolver, paths []string) error {
	for _, p := range paths {
		if li, err := r.lookup(p); err == nil && li.target != "" {
			return fmt.Errorf("%s is a symlink: cordon protects it, but a link inside a writable root can be swapped for a real file from inside the sandbox; replace the link with what it points to", p)
		}
	}
	return nil
}

// PrivateTmpDir is the TMPDIR given to sandboxes of one workspace: private
// to the user, inside cordon's state directory (internal/state; the
// launcher creates it 0700 and checks its owner) so no other user can
// create it first, and kept out of the workspace so temp files never show
// up in a diff.
func PrivateTmpDir(workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(state.Path(), state.Tmp, hex.EncodeToString(sum[:6]))
}

// protect lists the read-only roots that guard root's auto-executed files.
func protect(root, cache string) []string {
	var out []string
	for _, n := range AutoExecNames {
		out = append(out, filepath.Join(root, n))
	}
	out = append(out, protectGit(root)...)
	for _, repo := range cachedNestedRepos(root, cache) {
		out = append(out, protectGit(repo)...)
		out = append(out, filepath.Join(repo, ".gitmodules"))
	}
	return out
}

// protectGit guards the git metadata of a work tree at dir: hooks and config
// of its gitdir, also when .git is a pointer file to a gitdir elsewhere
// (worktrees, submodules), and of submodule gitdirs under .git/modules. A
// work tree without .git gets a read-only .git so none can be planted.
func protectGit(dir string) []string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return []string{dotgit}
	case fi.Mode().IsRegular():
		out := []string{dotgit} // cannot be re-pointed
		if gd, ok := readGitdirFile(dotgit); ok {
			out = append(out, gitdirFiles(gd)...)
		}
		return out
	case fi.IsDir():
		out := gitdirFiles(dotgit)
		walkBounded(filepath.Join(dotgit, "modules"), func(p, name string, typ fs.FileMode) bool {
			if name == "HEAD" && typ.IsRegular() {
				out = append(out, gitdirFiles(filepath.Dir(p))...)
			}
			return true
		})
		return out
	default: // a symlink named .git: protect the link itself
		return []string{dotgit}
	}
}

// gitdirFiles lists what git executes or obeys from a gitdir, and from its
// common dir when the gitdir belongs to a linked worktree.
func gitdirFiles(gd string) []string {
	out := []string{filepath.Join(gd, "hooks"), filepath.Join(gd, "config")}
	if b, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(b))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		if r, err := Resolve(filepath.Clean(cd)); err == nil && r != gd {
			out = append(out, filepath.Join(r, "hooks"), filepath.Join(r, "config"), filepath.Join(gd, "commondir"))
		}
	}
	return out
}

// readGitdirFile parses a "gitdir: PATH" pointer file.
func readGitdirFile(name string) (string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	r, err := Resolve(filepath.Clean(target))
	if err != nil {
		return "", false
	}
	return r, true
}

// nestedRepos finds work trees below root (not root itself) by a bounded
// walk that does not follow symlinks, and the directories it read.
func nestedRepos(root string) (repos []string, read []dirStamp) {
	read = walkBounded(root, func(p, name string, _ fs.FileMode) bool {
		if name == ".git" {
			if filepath.Dir(p) != root {
				repos = append(repos, filepath.Dir(p))
			}
			return false
		}
		return !scanSkip[name]
	})
	return repos, read
}

// dirent is one directory entry: its name and its type bits.
type dirent struct {
	name string
	typ  fs.FileMode
}

// stamp identifies a directory's state: any entry added, removed or
// renamed in it moves its ctime, which, unlike mtime, no process can set.
type stamp struct {
	Ino   uint64 `json:"ino"`
	Ctime int64  `json:"ctime"`
}

// dirStamp is a directory the scan read, and its stamp when it did.
type dirStamp struct {
	Path string `json:"path"`
	stamp
}

// walkBounded visits entries under root breadth-first, at most scanDepth
// levels and scanEntries entries, never following symlinks; visit gets
// the entry's path, name and type, and returns false to skip a directory.
// It returns the directories it read.
func walkBounded(root string, visit func(p, name string, typ fs.FileMode) bool) []dirStamp {
	level := []string{root}
	seen := 0
	buf := make([]byte, 32<<10)
	var read []dirStamp
	for depth := 0; depth < scanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			ents, id, err := readDir(dir, buf)
			if err != nil {
				continue
			}
			read = append(read, dirStamp{dir, id})
			for _, d := range ents {
				if seen++; seen > scanEntries {
					return read
				}
				p := dir + "/" + d.name
				if dir == "/" {
					p = "/" + d.name
				}
				if visit(p, d.name, d.typ) && d.typ.IsDir() {
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return read
}

// credentials lists the credential stores under home to deny: those that
// exist, and those a sandbox could create because a writable root contains
// them. A store that is the workspace itself, or named in allow, stays open.
func credentials(r resolver, home, ws string, allow []string) []string {
	allowed := map[string]bool{}
	for _, a := range allow {
		if ra, err := resolveCached(r, a); err == nil {
			allowed[ra] = true
		}
	}
	var out []string
	for _, n := range CredentialStores {
		p, err := resolveCached(r, filepath.Join(home, n))
		if err != nil || allowed[p] || p == ws {
			continue
		}
		if li, err := r.lookup(p); (err == nil && li.exists) || within(p, ws) {
			out = append(out, p)
		}
	}
	return out
}

// within reports whether p equals root or lies below it.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// Agents compiles the --agents-root preset: the agents root denied, the
// agent's own directory writable, its parent's read-only.
func Agents(root, id, parent string) (FsSandboxPolicy, error) {
	if err := checkSpelling(root); err != nil {
		return FsSandboxPolicy{}, fmt.Errorf("agents root: %w", err)
	}
	for _, a := range []struct{ flag, v string }{{"agent", id}, {"parent", parent}} {
		if a.v == "" && a.flag == "parent" {
			continue
		}
		if a.v == "" || a.v == "." || a.v == ".." || strings.ContainsAny(a.v, "/\x00") {
			return FsSandboxPolicy{}, fmt.Errorf("%s id %q: must be one path component", a.flag, a.v)
		}
	}
	if parent == id {
		return FsSandboxPolicy{}, fmt.Errorf("parent id %q: an agent cannot be its own parent", parent)
	}
	p := FsSandboxPolicy{
		DeniedRoots:   []string{root},
		WritableRoots: []string{filepath.Join(root, id)},
	}
	if parent != "" {
		p.ReadonlyRoots = []string{filepath.Join(root, parent)}
	}
	return p, nil
}
