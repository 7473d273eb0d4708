package policy

import (
	"fmt"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// refuseSwappable refuses a denied or read-only root whose spelling passed
// a symbolic link the sandbox may write (docs/threat-model.md, class 2):
// the link itself, or a link among its ancestors. The backends protect
// the link's target, but the link is a directory entry in a writable
// place: the sandbox removes it and makes a real file or directory of
// that name, and every host tool that reads the root by the name the user
// gave then reads the sandbox's content. The workspace preset refuses the
// same shape for the names it protects. Nothing a backend does can keep
// such a name, so the policy is refused before any backend sees it.
func (c *Canonical) refuseSwappable(via map[string][]string, origin map[string]string) error {
	if testhook.KeepSwappable {
		return nil
	}
	for _, r := range c.roots {
		if r.Kind != Denied && r.Kind != Readonly {
			continue
		}
		for _, l := range via[r.Path] {
			if !c.Access(l, Write) {
				continue
			}
			return fmt.Errorf("%s %q: %s is a symlink: cordon protects %s, but a link inside a writable root can be swapped for a real file from inside the sandbox; replace the link with what it points to",
				r.Kind.Field(), origin[r.Path], l, r.Path)
		}
	}
	return nil
}
