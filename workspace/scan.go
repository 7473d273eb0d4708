package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
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
//
// What a sandbox makes costs a later launch a bounded amount
// (BENCHMARKS.md): a directory with more than scanWide subdirectories is
// not listed further, nor entered, and is protected whole (it is wide:
// what is in it is unknown), so its names are neither kept nor recorded;
// scanBytes bounds the bytes of paths and names the scan keeps, which
// bounds its memory and its record (scanRecordMax).
const scanDepth = 10

var (
	scanDirs    = 50000
	scanEntries = 1000000
	scanReuse   = 200000
	scanWide    = 10000
	scanBytes   = 12 << 20
)

var scanSkip = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, "__pycache__": true,
	".tox": true, ".mypy_cache": true, ".pytest_cache": true, ".cache": true,
}

// gitPlace is a git repository the scan found: a work tree (a directory
// with a .git entry) or a directory shaped like a git directory.
type gitPlace struct {
	Path   string `json:"path"`
	Gitdir bool   `json:"gitdir,omitempty"`
	// Has is what the scan knows of a work tree's entries (dirRecord.Has,
	// with hasKnown), 0 when nothing is known.
	Has uint16 `json:"has,omitempty"`
	// Conf, when not 0, makes this place a directory holding agents' or
	// editors' configuration: bit i set when NestedNames[i] is there
	// (dirRecord.Conf). Such a place is not a repository, and is listed
	// apart from one at the same path.
	Conf uint64 `json:"conf,omitempty"`
	// Fresh are the bits of Conf that the root's previous scan record did
	// not have: configuration that appeared since. Never recorded.
	Fresh uint64 `json:"-"`
	// Closed is a directory the scan could not read (no permission): what
	// is inside is unknown, so it is protected whole (gitGuard.places).
	// Never recorded: it is looked at again at each launch.
	Closed bool `json:"-"`
	// Wide is a directory with more than scanWide subdirectories, which
	// the scan neither listed whole nor entered: protected whole, as a
	// closed one is, and recorded, so that while it is unchanged a later
	// launch spends one stat on it.
	Wide bool `json:"wide,omitempty"`
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
	own := ownState()
	level := []string{root}
	read, entries, reused, kept := 0, 0, 0, 0
	buf := make([]byte, 32<<10)
	for depth := 0; depth < scanDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			if read >= scanDirs || entries >= scanEntries || reused >= scanReuse || kept >= scanBytes {
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
				ents, seen, wide, id, err := readDir(dir, buf, scanWide)
				if err != nil {
					// A directory closed to this user may hide repositories
					// a sandbox can open again (chmod is the owner's, and a
					// sandbox runs as the owner): it is reported, to be
					// protected whole. Gone or no longer a directory: it
					// holds nothing.
					if errors.Is(err, fs.ErrPermission) && dir != root && !testhook.ClosedUnchecked {
						places = append(places, gitPlace{Path: dir, Closed: true})
					}
					continue
				}
				entries += seen
				rec = recordOf(dir, id, ents, wide, dir == root)
				// The root cannot be protected whole: the first scanWide
				// of its subdirectories are entered, and the scan counts
				// as cut.
				cut = cut || wide && dir == root
			}
			dirs = append(dirs, rec)
			kept += len(rec.Path)
			switch rec.Shape {
			case shapeWorkTree:
				places = append(places, gitPlace{Path: dir, Has: rec.Has | hasKnown})
			case shapeGitdir:
				places = append(places, gitPlace{Path: dir, Gitdir: true})
			case shapeWide:
				places = append(places, gitPlace{Path: dir, Wide: true})
			}
			if rec.Conf != 0 {
				places = append(places, gitPlace{Path: dir, Conf: rec.Conf})
			}
			for _, n := range rec.Subdirs {
				if sub := dir + "/" + n; sub != own {
					next = append(next, sub)
					kept += len(n) + len(sub)
				}
			}
		}
		level = next
	}
	return places, dirs, cut
}

// recordOf is what the scan records of a directory it read: a wide one
// (not the root) only as such, neither described nor entered.
func recordOf(dir string, id stamp, ents []dirent, wide, isRoot bool) dirRecord {
	if wide && !isRoot {
		return dirRecord{Path: dir, stamp: id, Shape: shapeWide}
	}
	return describe(dir, id, ents, isRoot)
}

// kept reports an entry the scan looks at (describe, shape): every name
// with a leading dot, the names of a git directory and of a work tree,
// and every subdirectory. Other files are counted, not kept.
func kept(name string, typ fs.FileMode) bool {
	if typ.IsDir() || strings.HasPrefix(name, ".") {
		return true
	}
	switch name {
	case "HEAD", "objects", "refs", "commondir":
		return true
	}
	return slices.Contains(workTreeNames, name)
}

// ownState is cordon's state directory as the scan meets it (resolved),
// which the scan never enters: it is denied inside every sandbox, so
// nothing in it needs protecting, and what cordon keeps there (masks of
// mode 0111, the private TMPDIRs and caches) would otherwise come back as
// closed directories and roots inside the state directory, which the
// launcher refuses (HOME as the workspace, docs/design.md).
func ownState() string {
	d := state.Path()
	if r, err := filepath.EvalSymlinks(d); err == nil {
		return r
	}
	return d
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
	var st syscall.Stat_t
	if syscall.Lstat(dir, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR || statStamp(&st) != rec.stamp {
		return dirRecord{}, false
	}
	return rec, true
}

// describe is what the scan needs of a directory it read: its shape (none
// for the root), which of NestedNames it holds (not asked of the root,
// whose names are protected whether or not they exist) and the
// subdirectories to enter (none in a git directory, none that is one of
// NestedNames: it is read-only as a whole).
func describe(dir string, id stamp, ents []dirent, isRoot bool) dirRecord {
	rec := dirRecord{Path: dir, stamp: id}
	for _, d := range ents {
		if len(d.name) < 2 || !nestedFirst[d.name[0]] || isRoot || testhook.NoNestedConfigs {
			continue // few nested names, few first bytes: most entries stop here
		}
		if i, ok := nestedIndex[d.name]; ok {
			rec.Conf |= 1 << i
		}
		// The nested names of two components (.github/hooks,
		// .config/mise, ...): asked only of a directory holding the first.
		for _, n := range nestedDeeper[d.name] {
			if exists(dir + "/" + n) {
				rec.Conf |= 1 << nestedIndex[n]
			}
		}
	}
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
		if d.typ.IsDir() && d.name != ".git" && !scanSkip[d.name] && !nestedName(d.name) {
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
	// Conf: which of NestedNames it holds (bit i: NestedNames[i]).
	Conf uint64 `json:"conf,omitempty"`
}

// nestedIndex is the bit of each of NestedNames in Conf.
var nestedIndex = func() map[string]int {
	m := make(map[string]int, len(NestedNames))
	for i, n := range NestedNames {
		m[n] = i
	}
	return m
}()

// nestedFirst are the first bytes of NestedNames; nestedDeeper, the
// names of two components by their first.
var nestedFirst, nestedDeeper = func() (first [256]bool, deeper map[string][]string) {
	deeper = map[string][]string{}
	for _, n := range NestedNames {
		first[n[0]] = true
		if top, _, ok := strings.Cut(n, "/"); ok {
			deeper[top] = append(deeper[top], n)
		}
	}
	return first, deeper
}()

func nestedName(n string) bool {
	_, ok := nestedIndex[n]
	return ok
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
	shapeWide     = 3 // has more than scanWide subdirectories; not entered
)
