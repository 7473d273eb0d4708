package policy

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// unsteer judges the roots whose spelling passed a symbolic link that the
// policy lets the sandbox write (docs/threat-model.md, class 11). A
// denied or read-only one is refused before (refuseSwappable), so only
// writable roots reach it; its rule for the others stays for the
// mutation check that turns the refusal off (testhook.KeepSwappable). Such a
// link may have been planted by an earlier sandbox to steer a root the
// user named inside a writable place (a readonly ws/vendor, a denied
// ws/secrets) to a place of its choosing: a readonly root inside a denied
// one opens it for reading, a writable root anywhere opens it for
// writing, and a missing denied root would be created on the host as a
// mount point. So a steered root is kept only where it restricts, like a
// derived root: a denied root always, a readonly root where the policy
// without the steered roots allows reading, a writable root where that
// policy allows writing anyway. One dropped is noted.
//
// A steered denied or readonly root that is missing where the sandbox
// cannot create it is dropped too: a mount there would protect nothing
// the sandbox can reach, while the directory a backend makes as its mount
// point would be a write on the host at a place the link chose.
func (c *Canonical) unsteer(via map[string][]string, origin map[string]string) {
	var steered []Root
	link := map[string]string{}
	for _, r := range c.roots {
		for _, l := range via[r.Path] {
			if c.Access(l, Write) {
				steered = append(steered, r)
				link[r.Path] = l
				break
			}
		}
	}
	if len(steered) == 0 || testhook.StayOnSteered {
		return
	}
	for _, r := range steered {
		delete(c.kinds, r.Path)
	}
	c.roots = slices.DeleteFunc(c.roots, func(r Root) bool { _, ok := link[r.Path]; return ok })
	for _, r := range steered {
		keep := true
		switch r.Kind {
		case Readonly:
			keep = c.Access(r.Path, Read)
		case Writable, BaseWritable:
			keep = c.Access(r.Path, Write)
		}
		what := fmt.Sprintf("%s %q resolves through the symbolic link %s, in a place the sandbox can write (an earlier sandbox may have made it), to %s",
			r.Kind.Field(), origin[r.Path], link[r.Path], r.Path)
		if !keep {
			c.notes = append(c.notes, fmt.Sprintf("%s: ignored, since there it would open what the rest of the policy closes; name %s itself if you mean it", what, r.Path))
			continue
		}
		if exists, _ := c.Stat(r.Path); keep && !exists && !c.creatable(r.Path) {
			c.notes = append(c.notes, fmt.Sprintf("%s: ignored, since it does not exist and the sandbox cannot create it there, and its mount point would be a directory made on the host where the link chose", what))
			continue
		}
		c.kinds[r.Path] = r.Kind
		c.roots = append(c.roots, r)
	}
}

// creatable reports whether the sandbox could create the missing path p:
// whether its nearest existing ancestor is writable.
func (c *Canonical) creatable(p string) bool {
	for a := filepath.Dir(p); ; a = filepath.Dir(a) {
		if exists, _ := c.Stat(a); exists || a == "/" {
			return c.Access(a, Write)
		}
	}
}
