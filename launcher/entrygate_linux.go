package launcher

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// landlockEntries decides the entry gate's calls (gate.EntryDecider)
// for a landlock sandbox: the kernel's part by the plan, what the gate
// performs itself by the model (docs/design.md, "The entry gate").
type landlockEntries struct {
	plan  *landlock.Plan
	canon *policy.Canonical
	shm   string // /dev/shm, its links resolved ("" when there is none)
	tmp   string // /tmp, its links resolved, when the model gates it (policy.Canonical.GatedTmp)
}

// newLandlockEntries finds /dev/shm and /tmp as the gate will see them
// resolved (some systems make /dev/shm a link to /run/shm).
func newLandlockEntries(plan *landlock.Plan, canon *policy.Canonical) landlockEntries {
	e := landlockEntries{plan: plan, canon: canon, shm: resolvedDir("/dev/shm")}
	if t := resolvedDir(policy.TmpPath); t != "" && canon.GatedTmp() && readsNew(plan, t) {
		e.tmp = t
	}
	return e
}

// readsNew says whether Landlock lets the sandbox read and list what is
// made in dir after the launch: not where a denied root below dir split
// it into a rule per entry it held then (docs/design.md, "/tmp"), where
// what the gate made would be written and never read.
func readsNew(plan *landlock.Plan, dir string) bool {
	p := dir + "/\x00" // a name nothing has
	return plan.Allows(p, landlock.OpRead) && plan.Allows(p, landlock.OpList)
}

// resolvedDir is directory p with its links resolved, "" when it is none.
func resolvedDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			return r
		}
	}
	return ""
}

// KernelAllows is what Landlock grants by the plan: the gate lets the
// kernel continue there.
func (e landlockEntries) KernelAllows(p string, need gate.Need) bool {
	switch need {
	case gate.NeedEntry:
		return e.plan.Allows(p, landlock.OpChange)
	case gate.NeedWrite:
		return e.plan.Rights(p, false)&landlock.WriteFile != 0
	default:
		return e.plan.Rights(p, false)&landlock.Truncate != 0 || e.plan.HandledFS&landlock.Truncate == 0
	}
}

// MayEntry is the model's verdict on changing the entry at p; /dev and
// /proc are the host's, never the policy's (the plan grants only fixed
// device files there, and none of their names).
func (e landlockEntries) MayEntry(p string) bool {
	return !hostOnly(p) && e.canon.MayChangeEntry(p)
}

// MayCreate is MayEntry, or p is a writable root that does not exist
// yet, made as what its spelling says (policy.Canonical.FileRoot:
// --writable DIR/out.log a file, --writable DIR/cache/ a directory):
// exactly that name, in a directory the sandbox may not otherwise change,
// as native and bwrap bind an empty file or directory there.
func (e landlockEntries) MayCreate(p string, dir bool) bool {
	if e.MayEntry(p) {
		return true
	}
	if hostOnly(p) || !e.canon.IsRoot(p) || !e.canon.Access(p, policy.Write) || !e.canon.WritableBeneath(p) {
		return false
	}
	return e.canon.FileRoot(p) != dir
}

// MayWrite is the model's verdict on writing the file at p.
func (e landlockEntries) MayWrite(p string) bool {
	return !hostOnly(p) && e.canon.Access(p, policy.Write)
}

// mayChangeMeta widens the plan's metadata verdict to the entries the
// gate made where the plan froze their directory: a file the model lets
// the sandbox write, a directory it may write all of (a frozen one keeps
// its mode: chmod 0 on it would reach what the plan grants below).
func (e landlockEntries) mayChangeMeta(p string, dir bool) bool {
	if e.plan.MayChangeMeta(p, dir) {
		return true
	}
	if hostOnly(p) || !e.canon.Access(p, policy.Write) {
		return false
	}
	return !dir || e.canon.WritableBeneath(p)
}

// Private is /dev/shm, the host's, shared with its processes, where
// shm_open and sem_open make their objects, and /tmp unless the policy
// decides it (policy.Canonical.GatedTmp): no mount can hide the host's
// there. The sandbox reaches there only what it made in this launch
// (gate.EntryDecider.Private); the host's entries stay as the model says.
func (e landlockEntries) Private(dir string) bool {
	return dir != "" && (dir == e.shm || dir == e.tmp)
}

func hostOnly(p string) bool {
	for _, d := range []string{"/dev", "/proc"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// gateDecider is the landlock sandbox's whole gate: metadata and entries.
type gateDecider struct {
	gate.Funcs
	landlockEntries
	proxy netip.AddrPort // with an allowlist: where connects may go
	spec  *landlock.Spec // the sandbox's
	hostSockets
}

// ProxyAddr names the proxy to the connect gate (invalid: none).
func (d gateDecider) ProxyAddr() netip.AddrPort { return d.proxy }

// RestrictThread confines the calling thread by the sandbox's own
// ruleset, where the gate binds the sandbox's Unix sockets.
func (d gateDecider) RestrictThread() error { return landlock.RestrictThread(d.spec) }

// Without every method the gate would answer the entry calls ENOSYS.
var (
	_ gate.EntryDecider = gateDecider{}
	_ gate.HostSockets  = gateDecider{}
)
