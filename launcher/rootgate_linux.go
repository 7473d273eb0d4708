package launcher

import (
	"slices"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/policy"
)

// rootedCalls are the calls the native and bwrap backends' filter hands
// to the entry gate: those that make a name (the opens only with O_CREAT
// or O_TMPFILE). Removing, truncating and writing stay the kernel's:
// the mounts decide them, and an existing protected path keeps its
// read-only bind.
var rootedCalls = []string{
	"open", "openat", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
}

// rootedRules returns r with the calls that make names handed to the
// gate.
func rootedRules(r bwrap.Rules) bwrap.Rules {
	r.Notify = append(slices.Clone(r.Notify), rootedCalls...)
	return r
}

// rootedEntries decides the entry gate's calls for a sandbox with a
// mount namespace of its own (native, bwrap): the mounts are the
// kernel's wall on what may be written, and the gate keeps only the
// names the model protects that do not exist yet (docs/design.md, "The
// entry gate"), so no empty directory of cordon's need stand in the
// user's project for them. It resolves in the sandbox's own root
// (gate.Rooted) and never lets the kernel continue a call.
type rootedEntries struct {
	canon *policy.Canonical
}

// OwnRoot: paths are the sandbox's, beneath /proc/PID/root.
func (rootedEntries) OwnRoot() bool { return true }

// KernelAllows is false: no wall of the kernel checks a protected name
// the gate would let it make.
func (rootedEntries) KernelAllows(string, gate.Need) bool { return false }

// MayEntry refuses p where the model protects it: a root that is not
// writable carved out of a writable one (a protected name, a nested
// repository's hooks, a denied path in the workspace), what lies in it,
// or an ancestor of one. Elsewhere the mounts decide: the gate performs
// the call as the sandbox, and a read-only bind answers EROFS.
func (e rootedEntries) MayEntry(p string) bool {
	if r, ok := e.canon.DecidingRoot(p); ok && !e.canon.Access(r.Path, policy.Write) && r.Path != "/" &&
		e.canon.Access(parentPath(r.Path), policy.Write) {
		return false
	}
	return e.canon.WritableBeneath(p)
}

// MayCreate is MayEntry: a writable root that does not exist is a
// mount point the sandbox finds made.
func (e rootedEntries) MayCreate(p string, _ bool) bool { return e.MayEntry(p) }

// MayWrite is MayEntry for the file a hard link brings: a read-only
// bind is another mount, which a link cannot leave (EXDEV).
func (e rootedEntries) MayWrite(p string) bool { return e.MayEntry(p) }

// Private: none; /dev/shm is the sandbox's own tmpfs.
func (rootedEntries) Private(string) bool { return false }

// MayChange and MayRead are never asked: the filter sends no metadata
// call (gate.Calls) under native and bwrap.
func (rootedEntries) MayChange(string, bool) bool { return false }
func (rootedEntries) MayRead(string, bool) bool   { return false }

func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

var (
	_ gate.EntryDecider = rootedEntries{}
	_ gate.Decider      = rootedEntries{}
	_ gate.Rooted       = rootedEntries{}
)
