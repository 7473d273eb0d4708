package policy

import "strings"

// A writable root that does not exist yet is made creatable as what its
// name says it is (docs/design.md, "Writable paths that do not exist
// yet"): a path spelled with a trailing slash ("out/", "out/.") names a
// directory, any other a file (a log, a lock file). A backend that needs
// a mount point there makes it of that type, so that exactly that file
// becomes writable and nothing beside it. A missing root with other roots
// below it is a directory whatever its spelling: they need one.

// spelledDir reports whether a root's spelling names a directory.
func spelledDir(in string) bool {
	return strings.HasSuffix(in, "/") || strings.HasSuffix(in, "/.")
}

// FileRoot reports whether the writable (or base writable) root p, where
// it does not exist, is a file: not spelled as a directory, and with no
// root below it. Whether it exists is the caller's to know (a backend
// asks its own view of the host).
func (c *Canonical) FileRoot(p string) bool {
	k, ok := c.kinds[p]
	if !ok || (k != Writable && k != BaseWritable) || c.dirRoots[p] {
		return false
	}
	for _, r := range c.roots {
		if below(r.Path, p) {
			return false
		}
	}
	return true
}

// underFileRoot reports whether p lies below a file root that does not
// exist, where there is nothing to protect: a file has no entries.
func (c *Canonical) underFileRoot(p string) bool {
	for _, a := range Ancestors(p) {
		if _, ok := c.kinds[a]; !ok {
			continue
		}
		// Existence first: it is a map lookup, FileRoot a walk of the
		// roots, and most writable roots exist.
		if exists, _ := c.Stat(a); !exists && c.FileRoot(a) {
			return true
		}
	}
	return false
}

// policyPath is p as Policy spells it: a missing writable root named as
// a directory keeps its trailing slash, so that a policy canonicalized
// again (by the launcher) makes it a directory too. One that exists is
// what it is.
func (c *Canonical) policyPath(r Root) string {
	if c.dirRoots[r.Path] && (r.Kind == Writable || r.Kind == BaseWritable) && r.Path != "/" {
		if exists, _ := c.Stat(r.Path); !exists {
			return r.Path + "/"
		}
	}
	return r.Path
}

// below reports whether p lies strictly inside directory d.
func below(p, d string) bool {
	return d == "/" && p != "/" || len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d
}
