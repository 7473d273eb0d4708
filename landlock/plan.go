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
// workspace needs under a hundred. A policy that needs more splits a
// directory holding thousands of entries: refused, naming it, rather than
// a launch that stalls. Listing is cheaper per entry, hence its larger
// bound.
var (
	maxRules  = 10_000
	maxListed = 200_000 // entries listed in split directories
)

// EntryKind is what a directory entry is, as lstat(2) sees it.
type EntryKind int

const (
	EntryFile EntryKind = iota
	EntryDir
	EntrySymlink
	// EntryOther is a device, FIFO or socket: a rule on it is a file's.
	EntryOther
)

// Entry is one name in a directory.
type Entry struct {
	Name string
	Kind EntryKind
}

// Lister lists the host's directories for Render.
type Lister interface {
	// ReadDir lists dir without following a link: dir itself must be a
	// directory, not a link to one, and entries are what lstat says.
	ReadDir(dir string) ([]Entry, error)
}

// OSLister lists this host's directories.
type OSLister struct{}

// ReadDir lists dir, refusing a dir that is a symlink. A link swapped in
// on the way to dir after its parent was listed is caught later: the init
// opens every rule's path without following links, and refuses the
// launch when one became a link.
func (OSLister) ReadDir(dir string) ([]Entry, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("list %s: not a directory (%s)", dir, fi.Mode().Type())
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, fmt.Errorf("list %s: it changed while it was opened", dir)
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		k := EntryOther
		switch t := de.Type(); {
		case t.IsDir():
			k = EntryDir
		case t&os.ModeSymlink != 0:
			k = EntrySymlink
		case t.IsRegular():
			k = EntryFile
		}
		out = append(out, Entry{Name: de.Name(), Kind: k})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

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
	nList  int
	loss   []string       // split dirs that lose rights, in visit order
	perDir map[string]int // a split dir -> rules on its entries
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
		found: map[string]bool{}, listed: map[string]bool{}, perDir: map[string]int{},
		pl: &Plan{ABI: abi, HandledFS: HandledFS(abi)},
	}
	for _, d := range opt.Devices {
		r.devices[d] = true
	}
	for _, m := range opt.Made {
		r.made[m] = true
	}
	r.bounds()
	if err := r.visit("/", true, 0); err != nil {
		return nil, err
	}
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

// visit renders p (a directory when dir) given the rights its ancestors'
// rules already grant beneath them.
func (r *renderer) visit(p string, dir bool, inherited uint64) error {
	w := r.want(p)
	if !dir {
		if a := w & FileRights; a&^inherited != 0 {
			return r.rule(p, a, false)
		}
		return nil
	}
	if !r.split[p] {
		if w&^inherited != 0 {
			return r.rule(p, w, true)
		}
		return nil
	}
	c := r.common[p]
	if c&^inherited != 0 {
		if err := r.rule(p, c, true); err != nil {
			return err
		}
	}
	inherited |= c
	if w&^c != 0 {
		r.loss = append(r.loss, p)
	}
	entries, err := r.list(p)
	if err != nil {
		// What cannot be listed is not rendered entry by entry: below it
		// only what its whole subtree may do is granted.
		r.pl.Stricter = append(r.pl.Stricter, Difference{Path: p,
			Why: fmt.Sprintf("%s could not be listed when the plan was made (%v): beneath it only what its whole subtree may do is granted", p, unwrapPath(err))})
		return nil
	}
	if r.nList += len(entries); r.nList > maxListed {
		return fmt.Errorf("landlock: rendering would list more than %d entries (directory %s holds %d): split directories are rendered entry by entry; narrow the roots below it", maxListed, p, len(entries))
	}
	for _, e := range entries {
		q := join(p, e.Name)
		r.found[q] = true
		switch e.Kind {
		case EntrySymlink:
			// No rule: access through a link is decided at its target.
			continue
		case EntryDir:
			err = r.visit(q, true, inherited)
		default:
			err = r.visit(q, false, inherited)
		}
		if err != nil {
			if errors.Is(err, errTooMany) {
				// Name the directory whose entries took the most rules.
				most := p
				for d, n := range r.perDir {
					if n > r.perDir[most] || (n == r.perDir[most] && d < most) {
						most = d
					}
				}
				return fmt.Errorf("landlock: rendering needs more than %d rules: directory %s is split (a root below it decides differently), so each of its entries is a rule of its own, %d so far; narrow the roots below it", maxRules, most, r.perDir[most])
			}
			return err
		}
	}
	return nil
}

var errTooMany = errors.New("too many rules")

func (r *renderer) rule(p string, a uint64, dir bool) error {
	if len(r.pl.Rules) >= maxRules {
		return errTooMany
	}
	r.pl.Rules = append(r.pl.Rules, Rule{Path: p, Access: a, Dir: dir})
	r.perDir[parent(p)]++
	return nil
}

// list lists dir, with the directories the launch makes in it.
func (r *renderer) list(dir string) ([]Entry, error) {
	r.listed[dir] = true
	if r.made[dir] {
		return nil, nil
	}
	es, err := r.l.ReadDir(dir)
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
