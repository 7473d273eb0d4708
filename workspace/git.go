package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// Git is protected as a whole, not by two file names (docs/threat-model.md,
// classes 6, 11 and 12). What git reads as configuration or runs as code,
// in one git directory GD:
//
//	GD/config, GD/config.worktree   configuration: core.fsmonitor,
//	                                core.hooksPath, core.sshCommand,
//	                                core.pager, core.editor, alias.*,
//	                                filter, diff and merge drivers,
//	                                credential.helper, include and
//	                                includeIf paths, extensions
//	GD/commondir                    moves config, hooks and the rest of
//	                                the above to another directory
//	GD/hooks/                       run by commit, checkout, merge, push
//	GD/modules/                     submodule git directories (each all of
//	                                this list), used as they are by 'git
//	                                submodule update --init' even for a
//	                                submodule the user never initialised
//	GD/worktrees/*/                 linked worktrees: commondir, gitdir,
//	                                config.worktree
//	GD/index                        gitlinks: 'git status' in the
//	                                repository runs 'git status' in the
//	                                repository of every gitlink whose
//	                                directory has a .git, with its config
//	GD/info/                        attributes (choose filter and diff
//	                                drivers), exclude, sparse-checkout
//	GD/objects/info/alternates      other object stores git reads
//	GD/rebase-merge/, rebase-apply/ an interrupted rebase: its todo list's
//	                                exec lines run on 'git rebase --continue'
//
// and in a work tree: .git (a directory, or a file naming the git
// directory), .gitmodules (submodule paths and URLs). Git's discovery,
// from the directory it runs in upwards, takes the first directory that
// has a .git or that is itself a git directory: HEAD, plus objects and
// refs or a commondir (a bare repository).
//
// By default every git directory found in a writable root is read-only as
// a whole: nothing in it can be planted or changed, and the index cannot
// gain a gitlink to a repository the sandbox made. 'git status', 'diff'
// and 'log' work; 'add' and 'commit' do not. Options.GitWrites
// opens git directories for commits except the paths gitWriteProtected
// lists; see its limits there.

// gitWriteProtected lists what stays read-only in git directory gd when
// the sandbox may commit. Files that are absent are left out: a mount
// point for one would be an empty directory, and git refuses to run when
// commondir is a directory, and warns on every command about an
// alternates directory. Its known limits, the price of letting the
// sandbox commit: a commondir or config.worktree it creates, a gitlink it
// adds to the index, a rebase todo list it plants.
func gitWriteProtected(gd string) []string {
	out := []string{
		filepath.Join(gd, "config"), filepath.Join(gd, "hooks"),
		filepath.Join(gd, "modules"), filepath.Join(gd, "info"),
	}
	if testhook.GitWritesOpenModules {
		out = slices.Delete(out, 2, 3)
	}
	for _, n := range []string{"commondir", "config.worktree", "objects/info/alternates"} {
		if p := filepath.Join(gd, n); exists(p) {
			out = append(out, p)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(gd, "worktrees")); err == nil {
		for _, e := range ents {
			for _, n := range []string{"commondir", "gitdir", "config.worktree"} {
				if p := filepath.Join(gd, "worktrees", e.Name(), n); exists(p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// unknown reports whether lstat of p failed for another reason than p's
// absence: a directory on its way is closed to this user.
func unknown(p string) bool {
	if testhook.ClosedUnchecked {
		return false
	}
	_, err := os.Lstat(p)
	return err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR)
}

// gitGuard derives the protection of the git metadata under one writable
// root: it collects read-only roots and notes for the user.
type gitGuard struct {
	root   string
	writes bool // Options.GitWrites
	roots  []string
	notes  []string
	done   map[string]bool
	refuse error  // only under testhook.NestedLinksRefuse
	buf    []byte // for hookNames
	cache  *guardCache
	refs   int // paths configs named, in or out of the root (a repository naming one is not plain)
}

func (g *gitGuard) note(format string, a ...any) {
	g.notes = append(g.notes, fmt.Sprintf(format, a...))
}

// gitdir protects git directory gd, and the common directory it names.
// gd must lie inside the root: a pointer out of it is not followed.
// top is the work tree it serves ("" when unknown).
func (g *gitGuard) gitdir(gd, top string) { g.gitdirAt(gd, top, nil) }

// gitdirAt is gitdir with gd's lstat when the caller has just taken it.
func (g *gitGuard) gitdirAt(gd, top string, st *syscall.Stat_t) {
	if g.done[gd] {
		return
	}
	g.done[gd] = true
	if g.writes || testhook.GitPerPath {
		g.roots = append(g.roots, gitWriteProtected(gd)...)
	} else {
		g.roots = append(g.roots, gd)
		if g.cache.cached(gd, st) {
			return // plain, as it was (guardcache.go)
		}
	}
	roots, notes, refs := len(g.roots), len(g.notes), g.refs
	has, hooks := g.linked(gd)
	for _, n := range []string{"config", "config.worktree"} {
		if !has[n] {
			continue
		}
		for _, p := range configRefs(filepath.Join(gd, n), gd, top) {
			g.refs++
			if within(p, g.root) {
				g.roots = append(g.roots, p)
			}
		}
	}
	if !has["commondir"] {
		if !g.writes && hooks == 0 && !has["config.worktree"] && len(g.roots) == roots && len(g.notes) == notes && g.refs == refs {
			g.cache.remember(gd)
		}
		return
	}
	if b, err := readFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		if r, err := policy.Resolve(filepath.Clean(cd)); err == nil && r != gd {
			g.follow(filepath.Join(gd, "commondir"), r, top)
		}
	}
}

// linked notes protected files of gd that have another name: a hard link
// made while the file was writable (a repository a sandbox created)
// stays writable through that name. Only the files git obeys are looked
// at; cordon cannot find the other name to protect it. It returns which
// of them are there (lstat), so that gitdir reads only those.
func (g *gitGuard) linked(gd string) (has map[string]bool, hooks int) {
	has = make(map[string]bool, 4)
	names := []string{"config", "config.worktree", "commondir", "index"}
	if g.buf == nil {
		g.buf = make([]byte, 8<<10)
	}
	// git runs a hook only by its exact name; the samples git init
	// writes (14 per repository) are never run.
	hookList, _ := hookNames(filepath.Join(gd, "hooks"), g.buf)
	for _, h := range hookList {
		names = append(names, "hooks/"+h)
	}
	for _, n := range names {
		p := gd + "/" + n
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			continue
		}
		has[n] = true
		if st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink > 1 {
			g.note("%s has %d hard links: cordon makes this name read-only, but another name for the same file may stay writable; if you did not link it, replace it with a copy (cp -p F F.new && mv F.new F)", p, st.Nlink)
		}
	}
	return has, len(hookList)
}

// readFile reads a git metadata file for the guard (boundedread.File, at
// most maxGitFile bytes). What it reads may have been planted by a
// sandbox: a FIFO reads as empty, a link to a device is refused
// unopened, and a link to /dev/zero is cut at the bound. It spends no
// system call on the poller's registration or a stat for the size: it
// runs for each repository's config on every launch.
func readFile(name string) ([]byte, error) {
	return boundedread.File(name, maxGitFile, false)
}

// maxGitFile bounds what readFile reads: git's config, commondir and
// gitdir files are far smaller.
const maxGitFile = 1 << 20

// follow protects target, named by pointer (a .git file, a commondir, a
// .git symlink), when it lies inside the root. A pointer out of the root
// is not followed: the place it names is decided by the policy as it
// stands (read-only or denied outside writable roots; another writable
// root's own scan protects the git directories inside it). One that does
// not lead to a git directory is explained.
func (g *gitGuard) follow(pointer, target, top string) {
	if within(target, g.root) || testhook.DerivedUnchecked {
		g.gitdir(target, top)
		return
	}
	if !isGitdir(target) {
		g.note("%s names %s, outside %s, which is not a git directory: not followed", pointer, target, g.root)
	}
}

// workTree protects the git metadata of work tree dir (root or a nested
// repository): its .git, whatever it is, and what it leads to.
func (g *gitGuard) workTree(dir string) { g.workTreeHas(dir, 0) }

// workTreeHas is workTree with what the scan knows of dir's entries
// (gitPlace.Has).
func (g *gitGuard) workTreeHas(dir string, h uint16) {
	if g.done["worktree:"+dir] {
		return
	}
	g.done["worktree:"+dir] = true
	if has(h, dir, ".gitmodules") {
		defer g.submodules(dir)
	}
	dotgit := filepath.Join(dir, ".git")
	if !g.dotGit(dir, dotgit) {
		return
	}
	if dir != g.root {
		g.roots = append(g.roots, filepath.Join(dir, ".gitmodules"))
	}
	// Files of the work tree that installed hooks read and obey: protected
	// where they exist (a mount point for a missing one would be an empty
	// directory that confuses the tool inside the sandbox).
	// At the top of the root, with a hook installed that may be a hook
	// manager's (pre-commit's passes --skip-on-missing-config), a missing
	// one is protected: the user's next commit would run what a sandbox
	// wrote there.
	if g.buf == nil {
		g.buf = make([]byte, 8<<10)
	}
	hooked := dir == g.root && hooksInstalled(dotgit, g.buf)
	for _, n := range HookConfigNames {
		if has(h, dir, n) || hooked && n != ".husky" {
			g.roots = append(g.roots, filepath.Join(dir, n))
		}
	}
	// What direnv, editors and agents obey, in a nested repository as at
	// the top: those it holds. The scan reports them in every directory
	// it reads (a place of their own, confPlace), so only a repository it
	// did not read is looked at here. A missing one is not protected
	// (hundreds of directories would take thousands of roots): it can be
	// created (docs/threat-model.md, class 6).
	if dir != g.root && h&hasKnown == 0 {
		for _, n := range NestedNames {
			if exists(filepath.Join(dir, n)) {
				g.roots = append(g.roots, filepath.Join(dir, n))
			}
		}
	}
}

// dotGit protects dir's .git, whatever it is, and what it leads to. It
// reports false for a .git symbolic link git cannot use: nothing more of
// dir is protected then.
func (g *gitGuard) dotGit(dir, dotgit string) bool {
	// One lstat, whose answer the guard's record also takes (gitdirAt):
	// thousands of repositories make each call count.
	var st syscall.Stat_t
	err := syscall.Lstat(dotgit, &st)
	switch typ := st.Mode & syscall.S_IFMT; {
	case err != nil:
		// None yet: a read-only .git keeps one from being planted. At
		// the top of a root, HEAD too: a directory holding HEAD, objects
		// and refs is a repository to git (a bare one), and an empty
		// directory named HEAD never passes git's check of a HEAD.
		g.roots = append(g.roots, dotgit)
		switch {
		case dir != g.root:
		case isGitdir(dir):
			// The root is a git directory itself (a bare repository):
			// it cannot be read-only as a whole and still be worked in.
			g.roots = append(g.roots, gitWriteProtected(dir)...)
		case testhook.NoTopHEAD:
		default:
			g.roots = append(g.roots, filepath.Join(dir, "HEAD"))
		}
	case typ == syscall.S_IFDIR:
		g.gitdirAt(dotgit, dir, &st)
	case typ == syscall.S_IFREG:
		g.roots = append(g.roots, dotgit) // it cannot be re-pointed
		if gd, ok := readGitdirFile(dotgit); ok {
			g.follow(dotgit, gd, dir)
		} else {
			g.note("%s is not a readable \"gitdir: PATH\" file: nothing to follow", dotgit)
		}
	case typ == syscall.S_IFLNK:
		// The link is an entry of a writable directory: it can be
		// re-pointed from inside, and a mount would land on its target.
		// Its target is protected when it lies inside the root.
		if testhook.NestedLinksRefuse && dir != g.root {
			g.refuse = fmt.Errorf("%s is a symlink", dotgit)
		}
		t, err := policy.Resolve(dotgit)
		if err != nil || !exists(t) {
			g.note("%s is a symlink to a missing or unresolvable place: git cannot use it; cordon protects nothing there", dotgit)
			return false
		}
		g.note("%s is a symlink: a sandbox can re-point it; cordon protects what it points at now", dotgit)
		g.follow(dotgit, t, dir)
	default:
		g.roots = append(g.roots, dotgit)
	}
	return true
}

// confPlace protects the agents' and editors' configuration the scan
// found in dir (gitPlace.Conf).
func (g *gitGuard) confPlace(dir string, conf uint64) {
	for i, n := range NestedNames {
		if conf&(1<<i) != 0 {
			g.roots = append(g.roots, filepath.Join(dir, n))
		}
	}
}

// hooksInstalled reports whether the git directory at dotgit has a hook
// in its hooks directory, or whether that cannot be told (then yes).
func hooksInstalled(dotgit string, buf []byte) bool {
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.IsDir() {
		return err == nil
	}
	names, err := hookNames(filepath.Join(dotgit, "hooks"), buf)
	return len(names) > 0 || err != nil && !errors.Is(err, fs.ErrNotExist)
}

// HookConfigNames are work tree files that common hook managers, once
// installed in .git/hooks, read to decide what to run on the user's next
// commit: pre-commit (a "local" hook is any command), lefthook, husky.
var HookConfigNames = []string{
	".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
	"lefthook.yaml", ".lefthook.yaml",
	"lefthook-local.yml", ".lefthook-local.yml", ".husky",
}

// submodules protects the repositories of the submodules .gitmodules of
// work tree dir names, whatever the scan's bounds, and keeps a .git from
// being planted in one not initialised yet: 'git submodule update --init'
// and 'git status' would use it as the submodule's git directory.
func (g *gitGuard) submodules(dir string) {
	for _, sub := range submodulePaths(dir) {
		if exists(filepath.Join(sub, ".git")) {
			g.workTree(sub)
		} else if !testhook.NoSubmoduleDotGit {
			g.roots = append(g.roots, filepath.Join(sub, ".git"))
		}
	}
}

// isGitdir reports whether dir has the shape git's discovery takes for a
// git directory: a HEAD, and objects and refs or a commondir.
func isGitdir(dir string) bool {
	return exists(filepath.Join(dir, "HEAD")) &&
		(exists(filepath.Join(dir, "objects")) && exists(filepath.Join(dir, "refs")) ||
			exists(filepath.Join(dir, "commondir")))
}

// readGitdirFile parses a "gitdir: PATH" pointer file.
func readGitdirFile(name string) (string, bool) {
	b, err := readFile(name)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if target == "" {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	r, err := policy.Resolve(filepath.Clean(target))
	if err != nil {
		return "", false
	}
	return r, true
}

// submodulePaths lists the paths .gitmodules of work tree dir names, so
// that their repositories are protected whatever the scan's bounds.
func submodulePaths(dir string) []string {
	b, err := readFile(filepath.Join(dir, ".gitmodules"))
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.TrimSpace(k) != "path" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		p := filepath.Join(dir, v)
		if v != "" && within(p, dir) && p != dir {
			out = append(out, p)
		}
	}
	return out
}

// enclosingTop is the work tree top of the repository git's discovery
// finds from root when root has no .git of its own: the nearest ancestor
// holding a .git. "" when root has one, or none is found up to /.
// Discovery's ceilings (GIT_CEILING_DIRECTORIES, file system boundaries)
// are the user's shell's and are not known here: the walk goes to /,
// which only ever protects more.
func enclosingTop(root string) string {
	if root == "/" || testhook.NoEnclosingRepo || exists(filepath.Join(root, ".git")) || unknown(filepath.Join(root, ".git")) {
		return ""
	}
	for a := filepath.Dir(root); ; a = filepath.Dir(a) {
		if exists(filepath.Join(a, ".git")) {
			return a
		}
		if a == "/" {
			return ""
		}
	}
}
