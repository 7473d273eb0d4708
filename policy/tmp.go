package policy

import "strings"

// TmpPath is the directory a backend with mounts substitutes: inside, /tmp
// is the launch's private directory, never the host's.
const TmpPath = "/tmp"

// WithTmp returns a copy of c in which /tmp is the substituted root src:
// a path below /tmp that no root at or below /tmp decides is readable and
// writable, and lives in src on the host. A root the policy names below
// /tmp (a workspace under /tmp, a denied or read-only root there) keeps
// deciding its own path, mounted over the private /tmp at that path. A
// policy that names /tmp itself decides /tmp as it says: c is returned
// unchanged. Only a backend that mounts src at /tmp may render the copy
// (native, bwrap); landlock renders c.
func (c *Canonical) WithTmp(src string) *Canonical {
	if src == "" || c.IsRoot(TmpPath) {
		return c
	}
	d := *c
	d.tmpSrc = src
	return &d
}

// TmpSource is the host directory mounted at /tmp (WithTmp), "" when /tmp
// is the host's.
func (c *Canonical) TmpSource() string { return c.tmpSrc }

// UnderTmp reports whether canonical path p is /tmp or below it.
func UnderTmp(p string) bool {
	return p == TmpPath || strings.HasPrefix(p, TmpPath+"/")
}

// GatedTmp reports whether a backend that cannot mount (landlock) makes
// /tmp a private creation directory: the sandbox makes entries in the
// host's /tmp and reaches, writes, renames and removes only those it
// made, which go when it ends, while every entry the host keeps there
// stays as the model says (readable, never changed). It does when no
// root names /tmp itself and the model lets the sandbox read /tmp but
// not write it; a policy that makes /tmp writable or denies it decides
// it as it says.
func (c *Canonical) GatedTmp() bool {
	return !c.IsRoot(TmpPath) && c.Access(TmpPath, Read) && !c.Access(TmpPath, Write)
}
