package landlock

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// Rights by the model's operations.
const (
	// ReadRights are what the model's Read grants.
	ReadRights = Execute | ReadFile | ReadDir
	// WriteRights are what the model's Write grants besides reading:
	// never device nodes, which nothing in the sandbox may make.
	WriteRights = WriteFile | RemoveDir | RemoveFile | MakeDir | MakeReg |
		MakeSock | MakeFifo | MakeSym | Refer | Truncate
	// ChangeRights are the rights on a directory that make, remove or
	// rename an entry directly in it (and, inherited, anywhere below).
	ChangeRights = RemoveDir | RemoveFile | MakeDir | MakeReg | MakeSock |
		MakeFifo | MakeSym | Refer
	// DeviceRights are what a fixed device file (/dev/null) gets.
	DeviceRights = ReadFile | WriteFile | Truncate
	// procRights are what /proc gets: reading, never writing (as root,
	// /proc/sys files are writable by uid 0 without a capability).
	procRights = ReadFile | ReadDir
)

// MinABI is the oldest Landlock ABI the backend uses: ABI 1 refuses every
// rename and link between directories (EXDEV), whatever the rules, and
// ABI 2 does not control truncation (truncate(2), open with O_TRUNC), so
// a read-only file could be emptied; a seccomp filter cannot tell which
// file a truncate names.
const MinABI = 3

// HandledFS are the file-system rights Landlock's ABI abi knows: a plan
// handles them all, so that none is left allowed by default.
func HandledFS(abi int) uint64 {
	h := Execute | WriteFile | ReadFile | ReadDir | RemoveDir | RemoveFile |
		MakeChar | MakeDir | MakeReg | MakeSock | MakeFifo | MakeBlock | MakeSym
	if abi >= 2 {
		h |= Refer
	}
	if abi >= 3 {
		h |= Truncate
	}
	if abi >= 5 {
		h |= IoctlDev
	}
	return h
}

// Limits of one rendering. Each rule costs the init an openat2 walk of
// its path and a landlock_add_rule call, and the kernel a rule and an
// object charged to the sandbox: measured on a 2-core host under a load
// average of 19, 66 us per rule (21 us of it the walk), so 10,000 rules
// hold a launch's setup under a second even there, while the usual
// workspace needs under a hundred. A split directory holding more entries
// than maxSplit, or than what is left of the budgets, is not rendered
// entry by entry: beneath it only what its whole subtree may do is
// granted, except on the way down to the roots below it (stricter, never
// a refusal: whoever can fill a directory, a sandbox in its workspace or
// any user in /tmp, must not make later launches fail). Its listing stops
// after maxSplit+1 entries, so a directory of millions is not read whole.
var (
	maxRules  = 10_000
	maxSplit  = 4_096   // entries of one split directory rendered apart
	maxListed = 200_000 // entries read from split directories in all
)

// Options are what a plan holds beyond the policy.
type Options struct {
	// Devices are device files granted reading and writing (DeviceRights).
	// Nothing else beneath /dev is granted: the host's /dev holds its
	// disks and the user's other terminals, and every backend gives a
	// sandbox only the usual device nodes, whatever the policy says.
	Devices []string
	// Proc grants reading beneath /proc (never writing); without it
	// nothing there is granted.
	Proc bool
	// Made are directories the launch makes before it applies the plan
	// (the private TMPDIR): rendered as existing and empty.
	Made []string
}

// DefaultOptions are the fixed extras of every landlock sandbox.
func DefaultOptions() Options {
	return Options{Devices: []string{"/dev/full", "/dev/null", "/dev/random", "/dev/tty", "/dev/urandom", "/dev/zero"}, Proc: true}
}

// renderer holds one rendering.
type renderer struct {
	c       *policy.Canonical
	l       Lister
	opt     Options
	handled uint64
	devices map[string]bool
	made    map[string]bool
	wants   map[string]uint64
	// split are the directories with a boundary below them that decides
	// differently; common is what their whole subtree may do.
	split  map[string]bool
	common map[string]uint64
	causes map[string][]string // a split dir -> boundaries below that take rights away, nearest first
	found  map[string]bool     // paths met in a listing
	listed map[string]bool     // directories listed
	pl     *Plan
	loss   []string // split dirs that lose rights, in visit order
	// kids are, for each directory with a boundary below it, the names
	// of its entries on the way to one: what a split directory not
	// rendered entry by entry still renders.
	kids map[string][]string
	// reserve is how many paths the kids name: the rules kept for them
	// out of maxRules, the rest being for entries rendered apart.
	reserve       int
	nList, nApart int  // entries read, entries rendered apart
	capped        bool // maxRules reached
}

// Render renders the canonical policy c to a Landlock domain for ABI abi,
// listing through l the directories it must split (see the package doc
// and docs/design.md, "landlock"). The plan never allows what c's model
// refuses; where it is stricter, Plan.Stricter says where and why.
func Render(c *policy.Canonical, abi int, l Lister, opt Options) (*Plan, error) {
	if abi <= 0 {
		return nil, errors.New("landlock: this kernel offers no Landlock to this process (not built in, off at boot, or refused by a seccomp profile around cordon)")
	}
	if abi < MinABI {
		return nil, fmt.Errorf("landlock: the kernel offers ABI %d; the landlock backend needs ABI %d or later (Linux 6.2): ABI 1 refuses every rename between directories, ABI 2 cannot refuse truncating a read-only file", abi, MinABI)
	}
	r := &renderer{
		c: c, l: l, opt: opt, handled: HandledFS(abi),
		devices: map[string]bool{}, made: map[string]bool{}, wants: map[string]uint64{},
		split: map[string]bool{}, common: map[string]uint64{}, causes: map[string][]string{},
		found: map[string]bool{}, listed: map[string]bool{}, kids: map[string][]string{},
		pl: &Plan{ABI: abi, HandledFS: HandledFS(abi)},
	}
	for _, d := range opt.Devices {
		r.devices[d] = true
	}
	for _, m := range opt.Made {
		r.made[m] = true
	}
	r.bounds()
	e, err := l.Lstat("/")
	if err != nil {
		e = Entry{Kind: EntryDir}
	}
	r.visit("/", e, 0)
	r.explainLosses()
	r.fixed()
	return r.pl, nil
}

// want is what the backend means to grant on p's whole subtree, before
// any split: the model's rights, except beneath /dev and /proc, which are
// the host's and not the policy's.
func (r *renderer) want(p string) uint64 {
	if w, ok := r.wants[p]; ok {
		return w
	}
	var w uint64
	switch {
	case r.devices[p]:
		w = DeviceRights
	case within(p, "/dev"):
		w = 0
	case within(p, "/proc"):
		if r.opt.Proc {
			w = r.model(p) & procRights
		}
	default:
		w = r.model(p)
	}
	w &= r.handled
	r.wants[p] = w
	return w
}

func (r *renderer) model(p string) uint64 {
	switch {
	case r.c.Access(p, policy.Write):
		return ReadRights | WriteRights
	case r.c.Access(p, policy.Read):
		return ReadRights
	}
	return 0
}

// bounds finds the split directories: every proper ancestor of a
// boundary (a root, /dev, /proc, a device file) that decides differently.
func (r *renderer) bounds() {
	var bs []string
	for _, root := range r.c.Roots() {
		bs = append(bs, root.Path)
	}
	bs = append(bs, "/dev", "/proc")
	for d := range r.devices {
		bs = append(bs, d)
	}
	slices.SortFunc(bs, func(a, b string) int {
		if da, db := policy.Depth(a), policy.Depth(b); da != db {
			return da - db
		}
		return strings.Compare(a, b)
	})
	bs = slices.Compact(bs)
	for _, b := range bs {
		if b == "/" {
			continue
		}
		for q := b; q != "/"; q = parent(q) {
			a, name := parent(q), q[strings.LastIndexByte(q, '/')+1:]
			if slices.Contains(r.kids[a], name) {
				break
			}
			r.kids[a] = append(r.kids[a], name)
			r.reserve++
		}
		wb := r.want(b)
		for a := parent(b); ; a = parent(a) {
			wa := r.want(a)
			if wa != wb {
				r.split[a] = true
			}
			if _, ok := r.common[a]; !ok {
				r.common[a] = wa
			}
			r.common[a] &= wb
			if wa&^wb != 0 && !slices.ContainsFunc(r.causes[a], func(c string) bool { return below(b, c) }) {
				r.causes[a] = append(r.causes[a], b)
			}
			if a == "/" {
				break
			}
		}
	}
}

// visit renders p, a directory when e.Kind is EntryDir, e its identity
// as listed, given the rights its ancestors' rules already grant beneath
// them.
func (r *renderer) visit(p string, e Entry, inherited uint64) {
	w := r.want(p)
	if e.Kind != EntryDir {
		if a := w & FileRights; a&^inherited != 0 {
			r.rule(p, e, a, false)
		}
		return
	}
	if !r.split[p] {
		if w&^inherited != 0 {
			r.rule(p, e, w, true)
		}
		return
	}
	r.pl.own(p, w) // its rule, if any, gives less than the model
	c := r.common[p]
	if c&^inherited != 0 {
		r.rule(p, e, c, true)
	}
	inherited |= c
	if w&^c == 0 {
		// Its entries off the way to the roots below want nothing more
		// than c: no need to list it.
		r.chains(p, inherited)
		return
	}
	r.loss = append(r.loss, p)
	limit := min(maxSplit, maxRules-r.reserve-r.nApart, maxListed-r.nList)
	var entries []Entry
	err := errTooMany
	if limit >= 0 {
		entries, err = r.list(p, limit)
		r.nList += len(entries)
		if err == nil && len(entries) > limit {
			err = errTooMany
		}
	}
	if err != nil {
		// What cannot be listed, or holds too many entries to grant
		// apart, is not rendered entry by entry: beneath it only what
		// its whole subtree may do is granted, but for the way down to
		// the roots below it.
		why := fmt.Sprintf("%s could not be listed when the plan was made (%v)", p, unwrapPath(err))
		if err == errTooMany {
			why = fmt.Sprintf("%s holds too many entries to grant each apart (more than %d; a plan renders at most %d entries of one directory, %d rules in all)", p, max(limit, 0), maxSplit, maxRules)
		}
		r.pl.Bounded = append(r.pl.Bounded, p)
		r.pl.Stricter = append(r.pl.Stricter, Difference{Path: p, Below: true,
			Why: why + ": beneath it only what its whole subtree may do is granted (" + rightsText(c, r.handled) + "), but on the way down to the roots below it"})
		r.chains(p, inherited)
		return
	}
	r.nApart += len(entries)
	for _, e := range entries {
		q := join(p, e.Name)
		r.found[q] = true
		if e.Kind == EntrySymlink {
			// No rule: access through a link is decided at its target.
			// What the model gives its own path is kept for the
			// metadata gate (lgetxattr of /lib when / is split).
			r.pl.own(q, r.want(q))
			continue
		}
		r.visit(q, e, inherited)
	}
}

var errTooMany = errors.New("too many entries")

// chains renders, of directory p's entries, only those on the way to a
// boundary below it, each lstat'ed rather than listed: what p holds
// beside them gets what p's own rule grants beneath it.
func (r *renderer) chains(p string, inherited uint64) {
	r.listed[p] = true
	for _, name := range r.kids[p] {
		q := join(p, name)
		e, err := r.l.Lstat(q)
		switch {
		case err == nil:
			r.found[q] = true
		case r.made[q]:
			e = Entry{Name: name, Kind: EntryDir}
		default:
			continue // not there: nothing to grant
		}
		if e.Kind == EntrySymlink {
			r.pl.own(q, r.want(q))
			continue
		}
		r.visit(q, e, inherited)
	}
}

// rule grants a on p. Past maxRules (a policy with more roots than that)
// the rule is left out, which is stricter, and said.
func (r *renderer) rule(p string, e Entry, a uint64, dir bool) {
	if len(r.pl.Rules) >= maxRules {
		if !r.capped {
			r.capped = true
			r.pl.Stricter = append(r.pl.Stricter, Difference{Path: p,
				Why: fmt.Sprintf("the plan holds %d rules, its bound: %s and what comes after it in the rendering get no rule of their own", maxRules, p)})
		}
		return
	}
	r.pl.Rules = append(r.pl.Rules, Rule{Path: p, Access: a, Dir: dir, Dev: e.Dev, Ino: e.Ino})
}

// list lists dir, with the directories the launch makes in it.
func (r *renderer) list(dir string, max int) ([]Entry, error) {
	r.listed[dir] = true
	if r.made[dir] {
		return nil, nil
	}
	es, err := r.l.ReadDir(dir, max)
	if err != nil && !r.hasMade(dir) {
		return nil, err
	}
	for m := range r.made {
		name := m[strings.LastIndexByte(m, '/')+1:]
		if parent(m) == dir && !slices.ContainsFunc(es, func(e Entry) bool { return e.Name == name }) {
			es = append(es, Entry{Name: name, Kind: EntryDir})
		}
	}
	return es, nil
}

func (r *renderer) hasMade(dir string) bool {
	for m := range r.made {
		if parent(m) == dir {
			return true
		}
	}
	return false
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// within reports whether p is d or lies below it.
func within(p, d string) bool {
	return p == d || below(p, d)
}

// below reports whether p lies strictly inside directory d.
func below(p, d string) bool {
	if d == "/" {
		return p != "/"
	}
	return len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d
}

// parent is the directory of a clean absolute path ("/" for "/").
func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}
