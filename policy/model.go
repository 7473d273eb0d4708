package policy

import (
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/closeddir"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// Op is an access checked by the model.
type Op int

const (
	// Read covers reading a file and listing a directory.
	Read Op = iota
	// Write covers creating, modifying, renaming and removing.
	Write
)

func (o Op) String() string {
	if o == Write {
		return "write"
	}
	return "read"
}

// Root is one canonical root and the field that named it.
type Root struct {
	Path string `json:"path"`
	Kind Kind   `json:"-"`
}

// Canonical is a validated policy whose roots are symlink-free absolute
// paths. It is the only form backends accept, and the model that decides
// every path (docs/design.md, section 1): the deepest root containing a path wins.
type Canonical struct {
	restrict bool
	roots    []Root              // sorted shallow-to-deep, then by path
	kinds    map[string]Kind     // root path -> kind
	dirRoots map[string]bool     // roots spelled as directories (fileroots.go)
	seen     map[string]linkInfo // what canonicalization found on the host
	viewAt   time.Time           // when the lookups in seen began
	notes    []string
	tmpSrc   string // the private directory at /tmp (tmp.go), "" for the host's
}

// ViewTime is when the view of the host c rests on began: what c found
// on the host was looked up at that time or later (Recanonicalize keeps
// the time of the view it starts from).
func (c *Canonical) ViewTime() time.Time { return c.viewAt }

// Canonicalize resolves every root (see Resolve) and validates the result:
// no path may be named by two fields, and "/" cannot be denied.
func Canonicalize(p FsSandboxPolicy) (*Canonical, error) {
	r := newResolver()
	defer r.close()
	return canonicalize(p, r)
}

// Recanonicalize is Canonicalize(p) on the view of the host that c rests
// on: every path c's canonicalization looked up is taken as it was found
// then, and only paths new to p are looked up. The launcher adds cordon's
// state directory to a policy Compose built a moment earlier this way
// (launcher.Cmd.Canonical). c is not changed.
func (c *Canonical) Recanonicalize(p FsSandboxPolicy) (*Canonical, error) {
	r := withView(maps.Clone(c.seen), c.viewAt)
	defer r.close()
	return canonicalize(p, r)
}

// canonicalize resolves through r: what r already looked up is not looked
// up again, so a policy composed and canonicalized through one resolver
// rests on one view of the host (see Compose).
func canonicalize(p FsSandboxPolicy, r resolver) (*Canonical, error) {
	n := len(p.derived)
	for _, f := range p.fields() {
		n += len(*f.paths)
	}
	// Sized once: a policy of thousands of roots would otherwise leave
	// each map's smaller tables behind as garbage.
	c := &Canonical{restrict: p.RestrictWrites, kinds: make(map[string]Kind, n), roots: make([]Root, 0, n), dirRoots: map[string]bool{}}
	origin := make(map[string]string, n) // canonical path -> input spelling, for errors
	via := map[string][]string{}         // canonical path -> the links its spelling passed
	var closed []closedRoot              // denied roots behind a directory closed to this user
	for _, f := range p.fields() {
		for _, in := range *f.paths {
			if err := checkSpelling(in); err != nil {
				return nil, fmt.Errorf("%s: %w", f.kind.Field(), err)
			}
			cp, links, err := resolveVia(in, r)
			if closedDenied(f.kind, err) {
				closed = append(closed, closedRoot{in, err})
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.kind.Field(), err)
			}
			if k, ok := c.kinds[cp]; ok {
				if k == f.kind {
					if spelledDir(in) {
						c.dirRoots[cp] = true // named a directory once is enough
					}
					continue // the same root twice in one field is harmless
				}
				return nil, fmt.Errorf("%s %q and %s %q both name %s: a path may be in only one field",
					k.Field(), origin[cp], f.kind.Field(), in, cp)
			}
			if cp == "/" && f.kind == Denied {
				return nil, fmt.Errorf("deniedRoots %q: denying / leaves nothing to run", in)
			}
			c.kinds[cp] = f.kind
			origin[cp] = in
			if spelledDir(in) {
				c.dirRoots[cp] = true
			}
			if len(links) > 0 {
				via[cp] = links
			}
			c.roots = append(c.roots, Root{Path: cp, Kind: f.kind})
		}
	}
	c.notes = append(c.notes, p.notes...)
	c.seen, c.viewAt = r.seen, r.at
	if err := c.refuseSwappable(via, origin); err != nil {
		return nil, err
	}
	c.unsteer(via, origin)
	if err := c.judgeClosed(closed, r); err != nil {
		return nil, err
	}
	if err := c.derive(p.derived, r); err != nil {
		return nil, err
	}
	sort.Slice(c.roots, func(i, j int) bool { return lessRoot(c.roots[i].Path, c.roots[j].Path) })
	return c, nil
}

// derive adds the derived read-only roots (FsSandboxPolicy.Protect) that
// restrict something: each is judged by the policy without any of them,
// so the order they come in does not matter. One the policy already
// names, or where writes are denied anyway, is dropped; one inside a
// denied root is noted, since only a planted pointer leads there.
//
// A derived root that cannot be looked up (a directory on its way closed
// to this user, or swapped for a link while the policy was resolved)
// fails the launch where the policy lets the sandbox write: a sandbox
// can close its own directories and open them again, so "cannot look"
// there must never mean "nothing to protect" (docs/threat-model.md,
// class 12). Elsewhere it is a note.
func (c *Canonical) derive(derived []string, r resolver) error {
	type failure struct {
		in  string
		err error
	}
	var add []string
	var failed []failure
	seen := map[string]bool{}
	for _, in := range derived {
		if checkSpelling(in) != nil {
			continue
		}
		cp, err := resolve(in, r)
		if err != nil {
			failed = append(failed, failure{in, err})
			continue
		}
		if _, named := c.kinds[cp]; named || seen[cp] || c.underFileRoot(cp) {
			continue
		}
		seen[cp] = true
		if exists, _ := c.Stat(cp); !exists && closeddir.ToUser(cp) {
			continue
		}
		if c.Access(cp, Write) || testhook.DerivedUnchecked {
			add = append(add, cp)
			continue
		}
		if root, ok := c.DecidingRoot(cp); ok && root.Kind == Denied {
			what := cp
			if cp != in {
				what = fmt.Sprintf("%s (through %s)", cp, in)
			}
			c.notes = append(c.notes, fmt.Sprintf("ignored %s, derived from workspace content: it lies in denied root %s, and a derived root only ever restricts", what, root.Path))
		}
	}
	for _, cp := range add {
		c.kinds[cp] = Readonly
		c.roots = append(c.roots, Root{Path: cp, Kind: Readonly})
	}
	// A root that could not be looked up below one derived here (a closed
	// directory the scan protects whole) is protected by it.
	for _, f := range failed {
		in := filepath.Clean(f.in)
		if root, ok := c.DecidingRoot(in); ok && root.Kind == Readonly {
			continue // read-only whole, as the note about it says
		}
		if !c.Access(in, Write) || testhook.ClosedUnchecked {
			c.notes = append(c.notes, fmt.Sprintf("not protected: %v", f.err))
			continue
		}
		return fmt.Errorf("cannot protect %s, which lies where the sandbox may write (a sandbox can close a directory of its own, or swap one for a link, to hide what is inside): %s", f.in, closeddir.Hint(in, f.err))
	}
	return nil
}

// Notes are explanations of what the policy's presets saw and did not
// follow (a pointer out of the workspace, a dropped derived root), for
// the user to read.
func (c *Canonical) Notes() []string { return c.notes }

// IsRoot reports whether canonical path p is one of the policy's roots.
func (c *Canonical) IsRoot(p string) bool { _, ok := c.kinds[p]; return ok }

// AddNotes appends explanations found after canonicalization (a PATH
// directory left writable on request), for Notes.
func (c *Canonical) AddNotes(notes ...string) { c.notes = append(c.notes, notes...) }

// Stat reports whether canonical path p existed, and as a directory, when
// the policy was canonicalized: a backend that must know what each root
// is asks here instead of the host again. Paths canonicalization did not
// look at are looked up now.
func (c *Canonical) Stat(p string) (exists, dir bool) {
	li, ok := c.seen[p]
	if !ok {
		var err error
		if li, err = (resolver{}).lookup(p); err != nil { // read-only: c is shared
			return false, false
		}
	}
	return li.exists && li.target == "", li.dir && li.target == ""
}

// lessRoot orders shallow before deep, then lexically, so that a mount or
// rule for a deeper root always comes after the ones it must override.
func lessRoot(a, b string) bool {
	da, db := Depth(a), Depth(b)
	if da != db {
		return da < db
	}
	return a < b
}

// Depth is the number of components in a canonical path ("/" has 0).
func Depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// RestrictWrites reports the policy's write mode.
func (c *Canonical) RestrictWrites() bool { return c.restrict }

// Roots returns every root, shallow to deep. The caller must not modify it.
func (c *Canonical) Roots() []Root { return c.roots }

// Policy returns the canonical five fields, each sorted, never nil.
func (c *Canonical) Policy() FsSandboxPolicy {
	p := FsSandboxPolicy{
		BaseWritableRoots: []string{},
		DeniedRoots:       []string{},
		ReadonlyRoots:     []string{},
		WritableRoots:     []string{},
		RestrictWrites:    c.restrict,
	}
	for _, r := range c.roots {
		for _, f := range p.fields() {
			if f.kind == r.Kind {
				*f.paths = append(*f.paths, c.policyPath(r))
			}
		}
	}
	for _, f := range p.fields() {
		sort.Strings(*f.paths)
	}
	return p
}

// DecidingRoot returns the deepest root that equals or contains the canonical
// path p; ok is false when no root does.
func (c *Canonical) DecidingRoot(p string) (r Root, ok bool) {
	for q := filepath.Clean(p); ; q = filepath.Dir(q) {
		if k, found := c.kinds[q]; found {
			return Root{Path: q, Kind: k}, true
		}
		if q == TmpPath && c.tmpSrc != "" {
			// The substituted /tmp (WithTmp): the launch's own directory.
			return Root{Path: TmpPath, Kind: Writable}, true
		}
		if q == "/" {
			return Root{}, false
		}
	}
}

// Access reports whether op is allowed on the canonical path p.
func (c *Canonical) Access(p string, op Op) bool {
	r, ok := c.DecidingRoot(p)
	return allowed(r.Kind, ok, c.restrict, op)
}

func allowed(k Kind, ok, restrict bool, op Op) bool {
	if !ok {
		return op == Read || !restrict
	}
	switch k {
	case Denied:
		return false
	case Readonly:
		return op == Read
	default: // Writable, BaseWritable
		return true
	}
}

// Verdict explains the model's decision for one path.
type Verdict struct {
	Path   string `json:"path"`
	Read   bool   `json:"read"`
	Write  bool   `json:"write"`
	Root   string `json:"root,omitempty"`  // the deciding root, "" when none
	Field  string `json:"field,omitempty"` // the field that named Root
	Reason string `json:"reason"`
}

// Explain decides the canonical path p for both operations and says why.
func (c *Canonical) Explain(p string) Verdict {
	r, ok := c.DecidingRoot(p)
	v := Verdict{
		Path:  p,
		Read:  allowed(r.Kind, ok, c.restrict, Read),
		Write: allowed(r.Kind, ok, c.restrict, Write),
	}
	if !ok {
		if c.restrict {
			v.Reason = "no root contains it; restrictWrites is true, so it is readable, not writable"
		} else {
			v.Reason = "no root contains it; restrictWrites is false, so it is readable and writable"
		}
		return v
	}
	v.Root, v.Field = r.Path, r.Kind.Field()
	if r.Path == TmpPath && c.tmpSrc != "" && !c.IsRoot(TmpPath) {
		v.Field = ""
		v.Reason = "/tmp inside is the launch's private directory " + c.tmpSrc + ", not the host's: read and write"
		return v
	}
	rel := "inside"
	if r.Path == p {
		rel = "is"
	}
	switch r.Kind {
	case Denied:
		v.Reason = fmt.Sprintf("%s denied root %s: no read, no write", rel, r.Path)
	case Readonly:
		v.Reason = fmt.Sprintf("%s readonly root %s: read only", rel, r.Path)
	case Writable:
		v.Reason = fmt.Sprintf("%s writable root %s: read and write", rel, r.Path)
	case BaseWritable:
		v.Reason = fmt.Sprintf("%s base writable root %s: read and write", rel, r.Path)
	}
	if rel == "inside" {
		v.Reason += " (the deepest root containing the path decides)"
	}
	return v
}

// Ancestors returns the proper ancestors of canonical path p, shallow to
// deep, excluding "/".
func Ancestors(p string) []string {
	var out []string
	for q := filepath.Dir(p); q != "/" && q != "."; q = filepath.Dir(q) {
		out = append(out, q)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// ID returns the identity (device, inode) canonical path p had when the
// policy was canonicalized, for a root that existed then; ok is false for
// a path that did not exist or that canonicalization did not look at.
func (c *Canonical) ID(p string) (id FileID, ok bool) {
	li, found := c.seen[p]
	if !found || !li.exists || li.target != "" {
		return FileID{}, false
	}
	return li.id, true
}

// IDs returns the identity of every root that existed when the policy was
// canonicalized: what a launch must find again (see CheckIDs).
func (c *Canonical) IDs() map[string]FileID {
	out := map[string]FileID{}
	for _, r := range c.roots {
		if id, ok := c.ID(r.Path); ok {
			out[r.Path] = id
		}
	}
	return out
}

// CheckIDs refuses c when the host changed under a policy since an earlier
// resolution found want (canonical roots and their identities, see IDs):
// a root of want that is no longer a root of c now resolves elsewhere (a
// directory on its way was swapped for a symlink), and a writable root
// that is gone or names another file is not the directory the policy was
// built for. Either would give the sandbox roots nobody built a policy
// for. A readonly or denied root that is gone or was replaced still
// protects its path, so that alone is no reason to refuse.
func (c *Canonical) CheckIDs(want map[string]FileID) error {
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		k, isRoot := c.kinds[p]
		if !isRoot {
			return fmt.Errorf("root %s changed after the policy was built: it now resolves elsewhere (a symlink was swapped in?); refusing the launch", p)
		}
		if k != Writable && k != BaseWritable {
			continue
		}
		got, ok := c.ID(p)
		if !ok || got != want[p] {
			now := "gone"
			if ok {
				now = got.String()
			}
			return fmt.Errorf("root %s changed after the policy was built (was %s, now %s); refusing the launch", p, want[p], now)
		}
	}
	return nil
}
