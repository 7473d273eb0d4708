package native

import (
	"fmt"
	"strings"
)

// Landlock is the sandbox's second wall on the file system: after the
// mount tree is built, the init restricts itself (and so the command it
// forks) with a Landlock domain that grants reads only beneath the
// sandbox's own root and writes only beneath the writable roots, whatever
// a descriptor, a mount arriving later or a mistake in the mount tree
// would reach (docs/threat-model.md, "Two walls").
//
// The rights are Landlock's (linux/landlock.h), kept here so that the
// rendering is a pure function of the spec, testable on any OS.
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1 // ABI 6
)

// Rights by use.
const (
	llRead = llExecute | llReadFile | llReadDir
	// llWrite is what a writable root allows: everything but making
	// device nodes, which no mount in the sandbox would honour (nodev)
	// and no process inside has the capability to make.
	llWrite = llWriteFile | llRemoveDir | llRemoveFile | llMakeDir | llMakeReg |
		llMakeSock | llMakeFifo | llMakeSym | llRefer | llTruncate
	// llFileWrite are the rights a rule on a file (not a directory) may
	// hold besides reading.
	llFileWrite = llWriteFile | llTruncate
)

// MinLandlockABI is the oldest Landlock ABI the init uses: ABI 1 refuses
// every rename and link between directories (EXDEV) whatever the rules,
// which breaks ordinary work (mv, git), so a kernel with only ABI 1 runs
// the sandbox with one wall.
const MinLandlockABI = 2

// handledFS are the file-system rights Landlock's ABI abi knows.
func handledFS(abi int) uint64 {
	var h uint64 = llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile |
		llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym
	if abi >= 2 {
		h |= llRefer
	}
	if abi >= 3 {
		h |= llTruncate
	}
	if abi >= 5 {
		h |= llIoctlDev
	}
	return h
}

// LandlockRule grants Access beneath Path, a path inside the sandbox, or
// on descriptor FD (Path empty) of the init's.
type LandlockRule struct {
	Path   string
	FD     int
	Access uint64
}

// LandlockPlan is the domain the init makes: the rights it handles (all
// the ABI knows), the scopes, and the rules that grant some back.
type LandlockPlan struct {
	ABI       int
	HandledFS uint64
	Scoped    uint64
	Rules     []LandlockRule
}

// PlanLandlock renders s into the Landlock domain for ABI abi; ok is
// false when the ABI is too old (or 0: no Landlock), and the sandbox
// then has one wall. stdio describes the descriptors the command
// inherits (0, 1, 2 and the caller's files): a rule on each one's own
// file lets the command open it again (/dev/stdout, /proc/self/fd/N) with
// the access it was given, which descriptors opened before the domain
// keep anyway.
func PlanLandlock(s *Spec, abi int, inherited []InheritedFD) (p LandlockPlan, ok bool) {
	if abi < MinLandlockABI {
		return LandlockPlan{ABI: abi}, false
	}
	h := handledFS(abi)
	p = LandlockPlan{ABI: abi, HandledFS: h}
	if abi >= 6 {
		p.Scoped = llScopeAbstractUnix | llScopeSignal
	}
	add := func(path string, a uint64) {
		if a &= h; a != 0 {
			p.Rules = append(p.Rules, LandlockRule{Path: path, Access: a})
		}
	}
	// The sandbox's root: its own tmpfs when the root is not writable
	// (build), so nothing reached from outside the tree inherits it.
	if s.RootWritable {
		add("/", llRead|llWrite)
	} else {
		add("/", llRead)
	}
	// The policy's writable roots: bound at their own paths.
	for _, m := range s.Mounts {
		if m.What == "bind" && !m.Readonly {
			add(m.Path, llWrite)
		}
	}
	// Device nodes (written, and ioctl'd: terminals), the sandbox's own
	// shared memory, and /proc, whose writable files (a process's own
	// oom_score_adj, comm) programs write; /proc/sys and its kin stay
	// read-only by their mounts and owner alone (one wall).
	add("/dev", llFileWrite|llIoctlDev)
	add("/dev/shm", llWrite)
	add("/proc", llFileWrite)
	for _, f := range inherited {
		var a uint64
		if f.Read {
			a |= llReadFile
		}
		if f.Write {
			a |= llFileWrite
		}
		if f.Device {
			a |= llIoctlDev
		}
		if a &= h; a != 0 {
			p.Rules = append(p.Rules, LandlockRule{FD: f.FD, Access: a})
		}
	}
	return p, true
}

// InheritedFD is a descriptor the command inherits that names a file of
// a file system (not a pipe or socket, not a directory), with the access
// its open mode gives.
type InheritedFD struct {
	FD                  int
	Read, Write, Device bool
}

// LandlockStatus says which Landlock ABI a native sandbox is confined
// with, for detect and profile.
func LandlockStatus(abi int) string {
	switch {
	case abi <= 0:
		return "unavailable (the kernel has no Landlock, or it is off): the native sandbox runs with one wall, its mounts"
	case abi < MinLandlockABI:
		return fmt.Sprintf("ABI %d is too old (renames between directories would fail): the native sandbox runs with one wall, its mounts", abi)
	}
	var has []string
	if abi >= 3 {
		has = append(has, "truncate")
	}
	if abi >= 5 {
		has = append(has, "device ioctl")
	}
	if abi >= 6 {
		has = append(has, "signal and abstract-socket scopes")
	}
	s := fmt.Sprintf("ABI %d in force, a second wall beside the mounts", abi)
	if len(has) > 0 {
		s += ", with " + strings.Join(has, ", ")
	}
	return s
}

// Describe lists p's rules for people ('cordon profile'): the rights
// each path gets beneath it. Rules on inherited descriptors are made at
// launch and are not listed.
func (p LandlockPlan) Describe() []string {
	var out []string
	for _, r := range p.Rules {
		if r.Path == "" {
			continue
		}
		var what []string
		if r.Access&llRead != 0 {
			what = append(what, "read")
		}
		if r.Access&llMakeReg != 0 {
			what = append(what, "write")
		} else if r.Access&llWriteFile != 0 {
			what = append(what, "write files")
		}
		if r.Access&llIoctlDev != 0 {
			what = append(what, "device ioctl")
		}
		out = append(out, strings.Join(what, ", ")+" beneath "+r.Path)
	}
	return out
}
