package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrInvalidPath is wrapped by every error about a path's spelling
// (relative, empty, NUL byte).
var ErrInvalidPath = errors.New("invalid path")

// maxLinks bounds symlink expansions like the kernel's ELOOP limit.
const maxLinks = 40

// Resolve returns the canonical form of an absolute path: symlinks expanded
// through the nearest existing ancestor, with the missing tail appended. It
// refuses relative and empty paths, NUL bytes and symlink loops, and never
// resolves anything against the working directory.
func Resolve(path string) (string, error) {
	if err := checkSpelling(path); err != nil {
		return "", err
	}
	r := resolver{dirs: newDirChain()} // nothing to cache: each component is looked up once
	defer r.close()
	return resolve(path, r)
}

// resolveCached is Resolve through r, a cache of what one caller has
// already looked up (a preset resolving many paths under one HOME).
func resolveCached(r resolver, path string) (string, error) {
	if err := checkSpelling(path); err != nil {
		return "", err
	}
	return resolve(path, r)
}

// CheckSpelling refuses a path that cannot name a root: empty, relative,
// or holding a NUL byte (errors wrap ErrInvalidPath). It looks nothing up.
func CheckSpelling(path string) error { return checkSpelling(path) }

func checkSpelling(path string) error {
	switch {
	case path == "":
		return fmt.Errorf("empty path: %w", ErrInvalidPath)
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("path %q contains a NUL byte: %w", path, ErrInvalidPath)
	case !filepath.IsAbs(path):
		return fmt.Errorf("path %q is relative; give an absolute path: %w", path, ErrInvalidPath)
	}
	return nil
}

// resolver caches lstat/readlink answers within one canonicalization so a
// policy of thousands of roots sharing ancestors stats each ancestor once.
// Its dirs keep the directories of its last lookups open (Linux), so that
// the next lookup in or below one starts there: the .git and .gitmodules
// of a repository are looked up in a directory opened once. The zero
// resolver caches nothing and opens each parent afresh; one from
// newResolver must be closed.
type resolver struct {
	seen map[string]linkInfo
	dirs *dirChain
	// at is when this view of the host began: nothing it holds was
	// looked up before then.
	at time.Time
}

func newResolver() resolver {
	return resolver{seen: map[string]linkInfo{}, dirs: newDirChain(), at: time.Now()}
}

// withView is a resolver that starts from what view, begun at at,
// already found.
func withView(view map[string]linkInfo, at time.Time) resolver {
	r := newResolver()
	r.seen, r.at = view, at
	return r
}

func (r resolver) close() { r.dirs.close() }

// Resolver is one view of the host for a caller that derives a policy
// from it (package workspace): every path it looks up is looked up once,
// and Canonicalize then rests on what the derivation saw, even while a
// sandbox swaps directories for symlinks. It must be closed.
type Resolver struct{ r resolver }

// NewResolver starts a view of the host.
func NewResolver() *Resolver { return &Resolver{r: newResolver()} }

// Close releases the directories the resolver holds open.
func (r *Resolver) Close() { r.r.close() }

// Resolve is the package's Resolve through r's view.
func (r *Resolver) Resolve(path string) (string, error) { return resolveCached(r.r, path) }

// Lookup reports what lstat finds at canonical path p through r's view:
// whether it exists, and the target when it is a symbolic link.
func (r *Resolver) Lookup(p string) (exists bool, target string, err error) {
	li, err := r.r.lookup(p)
	return li.exists, li.target, err
}

// ResolveVia is Resolve through r's view, with the symbolic links the
// path's spelling passed on its way.
func (r *Resolver) ResolveVia(path string) (target string, links []string, err error) {
	return resolveVia(path, r.r)
}

// Canonicalize is the package's Canonicalize through r's view.
func (r *Resolver) Canonicalize(p FsSandboxPolicy) (*Canonical, error) { return canonicalize(p, r.r) }

type linkInfo struct {
	exists bool
	dir    bool
	target string // non-empty for a symlink
	id     FileID // what lstat found, when it exists
}

// FileID is a file's identity on the host: its device and inode. A path
// whose FileID changed names another file than the one a policy was built
// for (docs/threat-model.md, one resolution per launch).
type FileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func (f FileID) String() string { return fmt.Sprintf("%d:%d", f.Dev, f.Ino) }

// fileID reads the identity lstat or stat returned.
func fileID(fi fs.FileInfo) FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)} //nolint:unconvert // Dev is int32 on darwin
	}
	return FileID{}
}

// lookupHook, when set (by tests), runs after each lookup resolveVia makes:
// where a test swaps a directory for a link between two lookups.
var lookupHook func(p string)

func (r resolver) lookup(p string) (linkInfo, error) {
	if li, ok := r.seen[p]; ok {
		return li, nil
	}
	li, err := lookupEntry(p, r.dirs)
	if err != nil {
		return li, err
	}
	if r.seen != nil {
		r.seen[p] = li
	}
	return li, nil
}

// lookupByPath is lookupEntry by path: os.Lstat follows a link in p's
// parent, so it serves only where the parent cannot be opened without
// following one (no openat2, macOS).
func lookupByPath(p string) (linkInfo, error) {
	var li linkInfo
	fi, err := os.Lstat(p)
	switch {
	case err == nil:
		li.exists = true
		li.dir = fi.IsDir()
		li.id = fileID(fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return li, fmt.Errorf("readlink %s: %w", p, err)
			}
			li.target = t
		}
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
	default:
		return li, fmt.Errorf("lstat %s: %w", p, err)
	}
	return li, nil
}

func resolve(path string, r resolver) (string, error) {
	cp, _, err := resolveVia(path, r)
	return cp, err
}

// resolveVia is resolve that also returns where the links it followed
// are: each link's own canonical path (its directory resolved, the link
// itself not followed), in the order met.
//
// Until a link is followed, each path it looks up is a prefix of path and
// is sliced from it: a policy of thousands of roots sharing ancestors
// allocates nothing for the ancestors it finds in r.
func resolveVia(path string, r resolver) (string, []string, error) {
	orig := path
	var via []string
	links := 0
	resolved := "/"
	rest := path
	missing := false // once a component is missing, the tail is lexical
	base := ""       // the last existing directory, while missing
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			if missing && len(resolved) <= len(base) {
				// back in what exists: look the rest up again, or a
				// link met from here on would stay in the root
				missing = false
			}
			continue
		}
		next := child(resolved, c, orig) // c is one clean component, resolved is clean
		if missing {
			resolved = next
			continue
		}
		li, err := r.lookup(next)
		if err != nil {
			return "", nil, fmt.Errorf("resolve %q: %w", orig, err)
		}
		if lookupHook != nil {
			lookupHook(next)
		}
		if !li.exists {
			missing, base = true, resolved
			resolved = next
			continue
		}
		if li.target == "" {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", nil, fmt.Errorf("resolve %q: %w", orig, syscall.ELOOP)
		}
		via = append(via, next)
		if filepath.IsAbs(li.target) {
			resolved = "/"
		}
		if rest == "" {
			rest = li.target
		} else {
			rest = li.target + "/" + rest
		}
	}
	return resolved, via, nil
}

// child is dir/c (dir clean and absolute, c one component), sliced from
// orig when orig begins with it.
func child(dir, c, orig string) string {
	n := len(dir) + 1 + len(c)
	if dir == "/" {
		n = 1 + len(c)
	}
	if len(orig) >= n && orig[n-len(c)-1] == '/' && orig[n-len(c):n] == c && orig[:n-len(c)-1] == strings.TrimSuffix(dir, "/") {
		return orig[:n]
	}
	if dir == "/" {
		return "/" + c
	}
	return dir + "/" + c
}
