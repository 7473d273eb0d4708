package policy

// MayChangeEntry reports whether the model lets a sandbox make, remove or
// rename the entry at the canonical path p: its directory's contents
// change, so the directory must be writable, and the entry must be with
// everything beneath it. A root below p that is not writable (a
// protected name such as .git, a denied root) makes p its ancestor,
// which is not the sandbox's to remove or move away; a backend that
// decides names one by one (the landlock backend's entry gate) asks
// here.
func (c *Canonical) MayChangeEntry(p string) bool {
	if p == "/" || !c.Access(p, Write) {
		return false
	}
	if dir := parentDir(p); !c.Access(dir, Write) {
		return false
	}
	return c.WritableBeneath(p)
}

// WritableBeneath reports whether every root strictly below the
// canonical path p lets a sandbox write.
func (c *Canonical) WritableBeneath(p string) bool {
	for _, r := range c.roots {
		if r.Path != p && inside(r.Path, p) && !allowed(r.Kind, true, c.restrict, Write) {
			return false
		}
	}
	return true
}

func parentDir(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// inside reports whether p is d or lies below it (both canonical).
func inside(p, d string) bool {
	if d == "/" {
		return true
	}
	return p == d || (len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d)
}
