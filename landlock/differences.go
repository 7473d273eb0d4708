package landlock

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// explainLosses says, for each split directory that loses rights the
// model gives it, what it loses and which carve-outs below are why; and
// for each root that wants rights but does not exist, that it gets none.
func (r *renderer) explainLosses() {
	for _, d := range r.loss {
		w, c := r.want(d), r.common[d]
		lost := w &^ c
		frozen := lost&ChangeRights != 0
		unlisted := lost&ReadDir != 0
		var what string
		switch {
		case frozen && unlisted:
			what = fmt.Sprintf("nothing can be created, removed or renamed directly in %s, and it cannot be listed", d)
		case frozen:
			what = fmt.Sprintf("nothing can be created, removed or renamed directly in %s", d)
		case unlisted:
			what = fmt.Sprintf("%s cannot be listed", d)
		default:
			what = fmt.Sprintf("files made directly in %s after launch cannot be read", d)
		}
		if frozen {
			r.pl.Frozen = append(r.pl.Frozen, d)
		}
		if unlisted {
			r.pl.Unlistable = append(r.pl.Unlistable, d)
		}
		why := what + ": it holds " + r.causeText(d)
		if (frozen || unlisted) && lost&ReadFile != 0 {
			why += "; what appears in it after launch cannot be read"
		}
		why += " (Landlock grants on whole trees, so each entry is granted apart instead)"
		r.pl.Stricter = append(r.pl.Stricter, Difference{Path: d, Why: why})
	}
	// A root granting more than its parent's rule, that does not exist:
	// Landlock grants only on what exists, and its parent is not opened up
	// to let it be made.
	for _, root := range r.c.Roots() {
		p := root.Path
		if p == "/" || r.found[p] || !r.listed[parent(p)] {
			continue
		}
		if r.want(p)&^r.common[parent(p)] != 0 && r.want(p)&ChangeRights != 0 {
			r.pl.Stricter = append(r.pl.Stricter, Difference{Path: p,
				Why: fmt.Sprintf("%s root %s does not exist: Landlock grants only on what exists, so it cannot be made and nothing can be written there", root.Kind, p)})
		}
	}
}

// causeText names the carve-outs below d that take rights away (not one
// inside another): those that exist first, then nearest first.
func (r *renderer) causeText(d string) string {
	cs := slices.Clone(r.causes[d])
	slices.SortStableFunc(cs, func(a, b string) int {
		return boolInt(!r.found[a]) - boolInt(!r.found[b])
	})
	var names []string
	for i, b := range cs {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(cs)-i))
			break
		}
		names = append(names, r.describe(b))
	}
	return strings.Join(names, ", ")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r *renderer) describe(b string) string {
	switch {
	case b == "/dev":
		return "/dev (the host's devices, of which only a few device files are granted)"
	case b == "/proc":
		return "/proc (read only)"
	case r.devices[b]:
		return "device " + b
	}
	root, ok := r.c.DecidingRoot(b)
	if !ok || root.Path != b {
		return b
	}
	var s string
	switch root.Kind {
	case policy.Denied:
		s = "denied " + b
	case policy.Readonly:
		s = "read-only " + b
	case policy.Writable:
		s = "writable " + b
	default:
		s = "base writable " + b
	}
	if r.listed[parent(b)] && !r.found[b] {
		s += " (not there yet: protected before it exists)"
	}
	return s
}

// fixed records the rules beyond the policy and the fixed narrowing of
// /dev and /proc.
func (r *renderer) fixed() {
	for _, rl := range r.pl.Rules {
		if r.devices[rl.Path] {
			r.pl.Extras = append(r.pl.Extras, Difference{Path: rl.Path, Why: "read and write: a device file every sandbox has"})
		}
	}
	if r.found["/dev"] {
		r.pl.Stricter = append(r.pl.Stricter, Difference{Path: "/dev",
			Why: "only the fixed device files are granted beneath /dev: it is the host's, holding its disks and the user's other terminals, and no backend gives those to a sandbox"})
	}
	if r.found["/proc"] {
		why := "nothing beneath /proc is granted"
		if r.opt.Proc {
			why = "/proc can be read, never written: as root, /proc/sys files are writable by uid 0 without a capability"
			if r.model("/proc")&ReadRights != 0 {
				r.pl.Extras = append(r.pl.Extras, Difference{Path: "/proc", Why: "read only: the host's /proc, as every sandbox reads its own"})
			}
		}
		r.pl.Stricter = append(r.pl.Stricter, Difference{Path: "/proc", Why: why})
	}
}
