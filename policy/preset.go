package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// Names at the top of a writable root that tools run or trust later, outside
// the sandbox (docs/threat-model.md, class 6). They are protected whether or not they exist:
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

// Bounds of the scan for git repositories in a writable root: deep enough
// for vendored trees (third_party/a/b/c/lib), small enough that a launch
// never walks a whole home directory. Directories that hold installed
// packages, never a repository the user commits in, are not entered.
// Files cost no directory read, so a directory of many files cannot use
// up the budget; scanEntries bounds the time spent listing them, and
// scanReuse the stats spent on directories an earlier scan read and that
// have not changed since (see scancache.go), which are not read again. A
// scan cut short keeps every repository seen before, and what it read:
// the next one goes further.
const scanDepth = 10

var (
	scanDirs    = 50000
	scanEntries = 1000000
	scanReuse   = 200000
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
	// where the scan for git repositories keeps what it found between
	// launches; see scancache.go.
	ScanCache string
	// GitWrites lets the sandbox write git metadata (add, commit, branch)
	// except what git runs or obeys as configuration (gitWriteProtected).
	// By default every git directory in the workspace is read-only as a
	// whole; see git.go for why.
	GitWrites bool
}

// Workspace compiles the --workspace preset: dir writable, the private
// TMPDIR writable, restrictWrites, auto-executed files and git metadata
// protected at the top of the workspace and in the git repositories found
// in it, and credential stores under HOME denied. dir must be absolute.
func Workspace(dir string, opt WorkspaceOptions) (FsSandboxPolicy, error) {
	return workspace(resolver{}, dir, opt)
}

// workspace is Workspace looking the host up through r, so that HOME and
// the workspace are looked up once, not per path, and so that Compose's
// later canonicalization sees what the preset saw.
func workspace(r resolver, dir string, opt WorkspaceOptions) (FsSandboxPolicy, error) {
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
	prot, err := protections(r, ws, home, opt)
	if err != nil {
		return FsSandboxPolicy{}, fmt.Errorf("workspace: %w", err)
	}
	p.Merge(prot)
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

// Protections compiles what guards writable root root as the workspace
// preset guards the workspace (docs/threat-model.md, class 6): its
// auto-executed files, the git metadata in it, and the shell files of
// opt.Home when root contains it. They are derived roots
// (FsSandboxPolicy.Protect): merged into a policy, each restricts only
// where that policy allows writes. A protected name at the top of root
// that is a symlink is an error.
func Protections(root string, opt WorkspaceOptions) (FsSandboxPolicy, error) {
	r := resolver{}
	home := opt.Home
	if home != "" {
		if rh, err := resolveCached(r, home); err == nil {
			home = rh
		}
	}
	return protections(r, root, home, opt)
}

func protections(r resolver, root, home string, opt WorkspaceOptions) (FsSandboxPolicy, error) {
	var q FsSandboxPolicy
	var top []string
	for _, n := range AutoExecNames {
		top = append(top, filepath.Join(root, n))
	}
	if home != "" && within(home, root) {
		for _, n := range ShellFiles {
			top = append(top, filepath.Join(home, n))
		}
	}
	// The names at the top of root are the user's: a sandbox finds them
	// protected from its first launch on, so a link there was not planted.
	// Names inside repositories found by the scan may have been, and a
	// link there is followed only into the root (gitGuard), never refused:
	// a planted link must not stop later launches.
	check := append(top, filepath.Join(root, ".git"))
	if !exists(filepath.Join(root, ".git")) {
		check = append(check, filepath.Join(root, "HEAD"))
	}
	if err := noLinks(r, check); err != nil {
		return q, err
	}
	q.Protect(top...)
	g := &gitGuard{root: root, writes: opt.GitWrites, done: map[string]bool{}}
	g.workTree(root)
	places, cut := cachedScan(root, opt.ScanCache)
	g.places(places)
	if cut {
		kept := "every repository an earlier scan found is still protected"
		if opt.ScanCache == "" {
			kept = "this caller keeps no scan record, so nothing earlier is known"
		}
		g.note("the scan of %s for git repositories stopped at its bound (%d directories, %d entries, %d levels): %s; repositories below what it read may be writable", root, scanDirs, scanEntries, scanDepth, kept)
	}
	if g.refuse != nil {
		return q, g.refuse
	}
	q.Protect(g.roots...)
	q.notes = append(q.notes, g.notes...)
	return q, nil
}

// guardWorkers is how many goroutines guard the repositories a scan
// found; guardChunk is the fewest repositories worth a goroutine.
var (
	guardWorkers = min(runtime.GOMAXPROCS(0), 8)
	guardChunk   = 64
)

// places guards the repositories the scan found. The work is a few dozen
// system calls per repository, so a workspace of hundreds is guarded by
// several goroutines, each with a guard of its own over a share of them,
// whose roots and notes are then taken in the order of the places (a
// root reached by two guards, through two pointers, is named twice,
// which canonicalization takes as once; a note is kept once).
func (g *gitGuard) places(places []gitPlace) {
	one := func(g *gitGuard, pl gitPlace) {
		if pl.Gitdir {
			if b := filepath.Base(pl.Path); !strings.HasSuffix(b, ".git") {
				g.note("%s has the shape of a git directory (HEAD, objects, refs): git run in it or below it on the host uses its config and hooks; if you did not make it, remove it", pl.Path)
			}
			g.gitdir(pl.Path, "")
		} else {
			g.workTreeHas(pl.Path, pl.Has)
		}
	}
	n := min(guardWorkers, len(places)/guardChunk)
	if n < 2 {
		for _, pl := range places {
			one(g, pl)
		}
		return
	}
	parts := make([]*gitGuard, n)
	var wg sync.WaitGroup
	for i := range parts {
		w := &gitGuard{root: g.root, writes: g.writes, done: maps.Clone(g.done)}
		parts[i] = w
		lo, hi := i*len(places)/n, (i+1)*len(places)/n
		wg.Go(func() {
			for _, pl := range places[lo:hi] {
				one(w, pl)
			}
		})
	}
	wg.Wait()
	noted := map[string]bool{}
	for _, w := range parts {
		g.roots = append(g.roots, w.roots...)
		for _, n := range w.notes {
			if !noted[n] {
				noted[n] = true
				g.notes = append(g.notes, n)
			}
		}
		if g.refuse == nil {
			g.refuse = w.refuse
		}
	}
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

// gitPlace is a git repository the scan found: a work tree (a directory
// with a .git entry) or a directory shaped like a git directory.
type gitPlace struct {
	Path   string `json:"path"`
	Gitdir bool   `json:"gitdir,omitempty"`
	// Has is what the scan knows of a work tree's entries (dirRecord.Has,
	// with hasKnown), 0 when nothing is known.
	Has uint16 `json:"has,omitempty"`
}

// scanGit finds the git repositories below root (not root itself) by a
// bounded breadth-first walk that never follows symlinks: work trees, and
// directories git's discovery would take for a git directory (a bare
// repository, a separate or planted gitdir), which it does not enter. A
// directory in prior whose stamp still matches is not read again: what it
// held then is what it holds now (see scancache.go), so only a stat is
// spent on it. It returns the repositories, what it learnt of each
// directory it reached, and whether a bound cut it short.
func scanGit(root string, prior map[string]dirRecord) (places []gitPlace, dirs []dirRecord, cut bool) {
	level := []string{root}
	read, entries, reused := 0, 0, 0
	buf := make([]byte, 32<<10)
	for depth := 0; depth < scanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			if read >= scanDirs || entries >= scanEntries || reused >= scanReuse {
				return places, dirs, true
			}
			rec, ok := unchanged(dir, prior)
			if ok {
				reused++
			} else {
				read++
				if scanRead != nil {
					scanRead(dir)
				}
				ents, id, err := readDir(dir, buf)
				if err != nil {
					continue
				}
				entries += len(ents)
				rec = describe(dir, id, ents, dir == root)
			}
			dirs = append(dirs, rec)
			switch rec.Shape {
			case shapeWorkTree:
				places = append(places, gitPlace{Path: dir, Has: rec.Has | hasKnown})
			case shapeGitdir:
				places = append(places, gitPlace{Path: dir, Gitdir: true})
			}
			for _, n := range rec.Subdirs {
				next = append(next, dir+"/"+n)
			}
		}
		level = next
	}
	return places, dirs, false
}

// scanRead, when set (by tests), is told of each directory scanGit reads.
var scanRead func(dir string)

// unchanged returns prior's record of dir when dir is still the directory
// it describes, with the same stamp.
func unchanged(dir string, prior map[string]dirRecord) (dirRecord, bool) {
	rec, ok := prior[dir]
	if !ok {
		return dirRecord{}, false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || stampOf(fi) != rec.stamp {
		return dirRecord{}, false
	}
	return rec, true
}

// describe is what the scan needs of a directory it read: its shape (none
// for the root) and the subdirectories to enter (none in a git directory).
func describe(dir string, id stamp, ents []dirent, isRoot bool) dirRecord {
	rec := dirRecord{Path: dir, stamp: id}
	if !isRoot {
		if pl, ok := shape(dir, ents); ok {
			rec.Shape = shapeWorkTree
			if pl.Gitdir {
				rec.Shape = shapeGitdir
				return rec
			}
			for _, d := range ents {
				// A directory named .gitmodules (a mount stub of cordon's)
				// names no submodule: there is nothing to read.
				if i := slices.Index(workTreeNames, d.name); i >= 0 && (i > 0 || !d.typ.IsDir()) {
					rec.Has |= 1 << i
				}
			}
		}
	}
	for _, d := range ents {
		if d.typ.IsDir() && d.name != ".git" && !scanSkip[d.name] {
			rec.Subdirs = append(rec.Subdirs, d.name)
		}
	}
	return rec
}

// shape tells from its entries whether dir is a work tree or a git
// directory.
func shape(dir string, ents []dirent) (gitPlace, bool) {
	var head, objects, refs, commondir bool
	for _, d := range ents {
		switch d.name {
		case ".git":
			return gitPlace{Path: dir}, true
		case "HEAD":
			head = !d.typ.IsDir()
		case "objects":
			objects = d.typ.IsDir()
		case "refs":
			refs = d.typ.IsDir()
		case "commondir":
			commondir = true
		}
	}
	if head && (objects && refs || commondir) {
		return gitPlace{Path: dir, Gitdir: true}, true
	}
	return gitPlace{}, false
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

// dirRecord is a directory the scan reached: its stamp when it was read,
// its shape and the subdirectories the scan enters.
type dirRecord struct {
	Path string `json:"path"`
	stamp
	Shape   int8     `json:"shape,omitempty"`
	Subdirs []string `json:"sub,omitempty"`
	// Has: of a work tree, which of the names the git guard looks for
	// it holds (workTreeNames), so the guard need not look again.
	Has uint16 `json:"has,omitempty"`
}

// workTreeNames are the entries of a work tree the git guard asks about
// (bit i of dirRecord.Has and gitPlace.Has: workTreeNames[i] is there).
// hasKnown marks a gitPlace.Has that answers: one read by this scan or
// unchanged since the scan that read it.
var workTreeNames = append([]string{".gitmodules"}, HookConfigNames...)

const hasKnown = 1 << 15

// has answers whether work tree entry name is there, from the scan's
// knowledge when h has it, else by looking.
func has(h uint16, dir, name string) bool {
	if h&hasKnown != 0 {
		if i := slices.Index(workTreeNames, name); i >= 0 {
			return h&(1<<i) != 0
		}
	}
	return exists(filepath.Join(dir, name))
}

// Shapes of a directory (dirRecord.Shape; 0: neither).
const (
	shapeWorkTree = 1 // holds a .git entry
	shapeGitdir   = 2 // is shaped like a git directory; not entered
)

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
