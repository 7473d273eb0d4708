package guards

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks matches Linux's limit on symlinks followed in one lookup, so a
// loop is reported the way the kernel would report it.
const maxLinks = 40

// ErrLoop reports too many symlinks while resolving a path.
var ErrLoop = errors.New("too many levels of symbolic links")

// Realpath resolves an absolute path the way the kernel does: each existing
// component's symlink is followed (also a dangling one, because writing
// through it creates its target), ".." applies to the resolved parent, and
// the part that does not exist yet is appended as is. A ".." below a
// missing component is an error, as it is for the kernel.
func Realpath(p string) (string, error) {
	if err := checkPath(p); err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("resolve %q: path is not absolute", p)
	}
	return walk("/", p)
}

func checkPath(p string) error {
	if p == "" {
		return errors.New("resolve: empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("resolve %q: path contains a NUL byte", p)
	}
	return nil
}

// walk resolves rest (relative, or absolute to restart at /) below base,
// which must already be resolved.
func walk(base, rest string) (string, error) {
	resolved := base
	links := 0
	missing := false // once a component is missing, later ones cannot exist
	// Only where a path begins (rest as given, or a link's target) does a
	// leading "/" restart at the root; inside one, "a//b" and a target
	// ending in "/" are empty components, as the kernel reads them.
	if strings.HasPrefix(rest, "/") {
		resolved = "/"
	}
	for rest != "" {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		switch c {
		case "", ".":
			continue
		case "..":
			if missing {
				// The kernel fails this lookup (ENOENT); a tool that
				// cleans the path first would instead land on whatever
				// the rest names, which was never looked at.
				return "", fmt.Errorf("resolve: \"..\" after %s, which does not exist: %w", resolved, fs.ErrNotExist)
			}
			resolved = filepath.Dir(resolved)
			continue
		}
		next := join(resolved, c)
		if missing {
			resolved = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = true
			resolved = next
			continue
		case err != nil:
			return "", fmt.Errorf("resolve %q: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", fmt.Errorf("resolve %q: %w", next, ErrLoop)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", next, err)
		}
		if strings.HasPrefix(target, "/") {
			resolved = "/" // an absolute target restarts at the root
		}
		if rest != "" {
			target += "/" + rest
		}
		rest = target
	}
	return resolved, nil
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Within reports whether p equals root or lies below it; both clean and
// absolute.
func Within(root, p string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root) && p[len(root)] == '/'
}

// Scope is a workspace: the directory an agent's path tools are confined to.
type Scope struct {
	dir string // realpath of the workspace
}

// absReal is dir made absolute and its real path; what names dir in
// errors ("workspace").
func absReal(what, dir string) (abs, real string, err error) {
	if abs, err = filepath.Abs(dir); err == nil {
		real, err = Realpath(abs)
	}
	if err != nil {
		return "", "", fmt.Errorf("%s %q: %w", what, dir, err)
	}
	return abs, real, nil
}

// NewScope resolves the workspace once, so each check only walks the part
// of a path below it.
func NewScope(dir string) (*Scope, error) {
	if err := checkPath(dir); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	_, real, err := absReal("workspace", dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %q: not a directory", dir)
	}
	return &Scope{dir: real}, nil
}

// Dir is the resolved workspace directory.
func (s *Scope) Dir() string { return s.dir }

// Lexical is p made absolute against the workspace and cleaned, without
// touching the filesystem: the spelling a tool was given.
func (s *Scope) Lexical(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(s.dir, p)
}

// Resolve returns where p really points and whether that is inside the
// workspace. A relative p is taken from the workspace. On error the path
// must be treated as outside.
func (s *Scope) Resolve(p string) (resolved string, inside bool, err error) {
	if err := checkPath(p); err != nil {
		return "", false, err
	}
	if strings.HasPrefix(p, "~") {
		// A tool may expand "~" or "~user" where cordon would not: the
		// two would mean different files.
		return "", false, fmt.Errorf("resolve %q: \"~\" is not expanded; give the path relative to the workspace", p)
	}
	switch {
	case !filepath.IsAbs(p):
		resolved, err = walk(s.dir, p)
	case Within(s.dir, p) && s.dir != "/":
		// The workspace prefix is already symlink-free; only walk below it.
		resolved, err = walk(s.dir, strings.TrimLeft(p[len(s.dir):], "/"))
	default:
		resolved, err = walk("/", p)
	}
	if err != nil {
		return "", false, err
	}
	return resolved, Within(s.dir, resolved), nil
}

// GlobPrefix returns the static directory of a glob pattern: the leading
// components without any of * ? [ { — the one place a pattern can reach
// before it is expanded. Dynamic reports whether anything followed, and
// climbs whether a ".." comes after a wildcard, which could leave the prefix
// whatever it matches.
func GlobPrefix(pattern string) (prefix string, dynamic, climbs bool) {
	parts := strings.Split(pattern, "/")
	static := len(parts)
	for i, c := range parts {
		if strings.ContainsAny(c, "*?[{\\") {
			static = i
			break
		}
	}
	for _, c := range parts[static:] {
		if c == ".." {
			climbs = true
		}
	}
	prefix = strings.Join(parts[:static], "/")
	if prefix == "" {
		if strings.HasPrefix(pattern, "/") {
			prefix = "/"
		} else {
			prefix = "."
		}
	}
	return prefix, static < len(parts), climbs
}
