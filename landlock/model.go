package landlock

import (
	"fmt"
	"slices"
	"strings"
)

// Op is an access the backend's own model decides.
type Op int

const (
	// OpRead reads (or runs) the existing file at the path.
	OpRead Op = iota
	// OpList lists the existing directory at the path.
	OpList
	// OpWrite writes (or truncates) the existing file at the path.
	OpWrite
	// OpChange creates, removes or renames the entry at the path: rights
	// on its directory.
	OpChange
)

// Rights are the rights the kernel gives the object at path (a directory
// when dir) under p: the union of the rules on its directory ancestors
// (and path itself, for a directory) and, for a file, the rule on that
// very file, as Landlock unions them. Paths the plan's rules reach only
// through a link are decided at the link's target: give that.
func (p *Plan) Rights(path string, dir bool) uint64 {
	var a uint64
	for _, r := range p.Rules {
		switch {
		case r.Path == path && r.Dir == dir:
			a |= r.Access
		case r.Dir && below(path, r.Path):
			a |= r.Access
		}
	}
	return a & p.HandledFS
}

// Allows reports whether the kernel allows op on path under p: every
// right op needs, among those the ABI handles, is granted.
func (p *Plan) Allows(path string, op Op) bool {
	var need, got uint64
	switch op {
	case OpRead:
		need, got = ReadFile, p.Rights(path, false)
	case OpList:
		need, got = ReadDir, p.Rights(path, true)
	case OpWrite:
		need, got = WriteFile|Truncate, p.Rights(path, false)
	case OpChange:
		if path == "/" {
			return false // "/" has no directory to be made in
		}
		need, got = ChangeRights, p.Rights(parent(path), true)
	}
	need &= p.HandledFS
	return got&need == need
}

// Describe lists p for people ('cordon profile --backend landlock'): the
// rules, the frozen and unlistable directories with why, and what is
// granted beyond the policy.
func (p *Plan) Describe() []string {
	out := []string{fmt.Sprintf("landlock ABI %d, handling %s", p.ABI, rightsText(p.HandledFS, p.HandledFS))}
	out = append(out, fmt.Sprintf("rules (%d; rights beneath each directory, or on each file):", len(p.Rules)))
	for _, r := range p.Rules {
		what := "dir "
		if !r.Dir {
			what = "file"
		}
		out = append(out, fmt.Sprintf("  %s %s: %s", what, r.Path, rightsText(r.Access, p.HandledFS)))
	}
	if len(p.Frozen) > 0 {
		out = append(out, "frozen (nothing created, removed or renamed directly in them):")
		for _, f := range p.Frozen {
			out = append(out, "  "+f)
		}
	}
	if len(p.Unlistable) > 0 {
		out = append(out, "not listable:")
		for _, f := range p.Unlistable {
			out = append(out, "  "+f)
		}
	}
	if len(p.Stricter) > 0 {
		out = append(out, "stricter than the model:")
		for _, d := range p.Stricter {
			out = append(out, "  "+d.Why)
		}
	}
	if len(p.Extras) > 0 {
		out = append(out, "granted beyond the policy:")
		for _, d := range p.Extras {
			out = append(out, fmt.Sprintf("  %s: %s", d.Path, d.Why))
		}
	}
	return out
}

// Explain says where p is stricter than the model for path, and why, or
// "as the model" ('cordon explain --backend landlock PATH').
func (p *Plan) Explain(path string) []string {
	var out []string
	for _, d := range p.Extras {
		if d.Path == path {
			out = append(out, "granted beyond the policy: "+d.Why)
		}
	}
	for _, d := range p.Stricter {
		split := slices.Contains(p.Frozen, d.Path) || slices.Contains(p.Unlistable, d.Path)
		switch {
		case d.Below:
			if below(path, d.Path) {
				out = append(out, d.Why)
			}
		case d.Path == path:
			out = append(out, d.Why)
		case split && parent(path) == d.Path && slices.Contains(p.Frozen, d.Path):
			out = append(out, path+": "+d.Why)
		case !split && below(path, d.Path) && !p.granted(path):
			out = append(out, d.Why)
		}
	}
	if len(out) == 0 {
		return []string{"as the model"}
	}
	return out
}

// granted reports whether a device file rule names path exactly (the
// fixed extras beneath /dev are not narrowed).
func (p *Plan) granted(path string) bool {
	for _, d := range p.Extras {
		if d.Path == path {
			return true
		}
	}
	return false
}

// rightsText names rights a for people, against the handled set h.
func rightsText(a, h uint64) string {
	var w []string
	if r := ReadRights & h; a&r == r {
		w = append(w, "read")
	} else {
		for _, x := range []struct {
			bit  uint64
			name string
		}{{ReadFile, "read files"}, {ReadDir, "list"}, {Execute, "run"}} {
			if a&x.bit != 0 {
				w = append(w, x.name)
			}
		}
	}
	if wr := WriteRights & h; a&wr == wr {
		w = append(w, "write")
	} else {
		for _, x := range []struct {
			bit  uint64
			name string
		}{{WriteFile, "write files"}, {Truncate, "truncate"}, {ChangeRights, "make or remove entries"}} {
			if a&x.bit != 0 {
				w = append(w, x.name)
			}
		}
	}
	if a&(MakeChar|MakeBlock) != 0 {
		w = append(w, "make devices")
	}
	if a&IoctlDev != 0 {
		w = append(w, "device ioctl")
	}
	if len(w) == 0 {
		return "nothing"
	}
	return strings.Join(w, ", ")
}

// MayChangeMeta reports whether the sandbox may change the metadata
// (mode, owner, extended attributes, times) of the existing object at
// path, a directory when dir: the metadata gate's (gate)
// decision, by the rules the plan renders from the policy, never by those
// granted beyond it (a device file every sandbox writes is the host's:
// chmod 000 /dev/null would break it for everyone). A file needs what
// writing it needs; a directory every right the model's Write gives, so
// that a frozen directory (whose rights stop short of making entries)
// keeps its mode: chmod 0 on it would reach what the plan grants below.
func (p *Plan) MayChangeMeta(path string, dir bool) bool {
	var got uint64
	for _, r := range p.Rules {
		if p.extra(r.Path) {
			continue
		}
		if (r.Path == path && r.Dir == dir) || (r.Dir && below(path, r.Path)) {
			got |= r.Access
		}
	}
	need := uint64(WriteFile | Truncate)
	if dir {
		need = WriteRights
	}
	need &= p.HandledFS
	return need != 0 && got&need == need
}

func (p *Plan) extra(path string) bool {
	for _, d := range p.Extras {
		if d.Path == path {
			return true
		}
	}
	return false
}

// MayReadMeta reports whether the sandbox may read the metadata that
// Landlock does not guard (extended attributes, inotify watches) of the
// existing object at path, a directory when dir: the metadata gate's
// decision for those calls. It may where the model lets it list the
// directory or read or run the file: where the plan grants that, and on
// the objects the plan grants less than the model for want of a finer
// rule (a split directory such as HOME holding ~/.ssh, a link in one
// such as /lib in /), where the model's rights on the path itself do.
// Never inside a denied root: nothing there has a rule or model rights.
func (p *Plan) MayReadMeta(path string, dir bool) bool {
	a := p.Rights(path, dir) | p.models[path]&p.HandledFS
	if dir {
		return a&ReadDir != 0
	}
	return a&(ReadFile|Execute) != 0
}

func (p *Plan) own(path string, a uint64) {
	if p.models == nil {
		p.models = map[string]uint64{}
	}
	p.models[path] = a
}

// DeniedMetadata is what the backend still shows of a path the model
// does not let the sandbox read: Landlock guards contents, not what is
// said about them, and the metadata gate decides only some of the calls
// that read it (stat and readlink are too frequent to send to the
// launcher).
const DeniedMetadata = "wider than the model: its existence, type, size, mode, owner, times and link target stay visible (stat, access, readlink), and a name can be tried; its contents, its listing, its extended attributes and inotify watches are refused"

// ExplainDenied is Explain for a path the model does not let the sandbox
// read: what stays visible of it, and where the plan is stricter.
func (p *Plan) ExplainDenied(path string) []string {
	out := p.Explain(path)
	if slices.Equal(out, []string{"as the model"}) {
		out = nil
	}
	return append(out, DeniedMetadata)
}
