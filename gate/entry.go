package gate

import (
	"slices"

	"github.com/cordon-sandbox/cordon/bwrap"
)

// An EntryDecider decides the calls that make, remove, rename and link
// names, and that open or truncate a file for writing: the entry gate
// (EntryRules). A Decider that is one too decides them; the gate asks it
// about paths as it found them (absolute, clean, the directory's links
// resolved, the last name as the caller gave it).
//
// Nothing in it is one backend's: the model answers MayEntry and
// MayWrite, the backend's own wall KernelAllows.
type EntryDecider interface {
	// KernelAllows says whether the kernel's own wall (Landlock, under
	// the landlock backend) lets the sandbox do what need names at
	// path: the gate then lets the kernel continue the call, which the
	// wall checks again on the path the kernel resolves.
	KernelAllows(path string, need Need) bool
	// MayEntry says whether the model lets the sandbox make, remove or
	// rename the entry at path (its directory's contents change), with
	// everything beneath it: a protected name, or the ancestor of one,
	// is refused.
	MayEntry(path string) bool
	// MayCreate says whether the model lets the sandbox make the
	// regular file (an O_CREAT open) or, dir, the directory (mkdir) at
	// path, which does not exist: what MayEntry allows, and also a
	// writable root that does not exist yet, made as what its name says
	// it is (--writable DIR/out.log, --writable DIR/cache/) in a
	// directory the sandbox may not otherwise change.
	MayCreate(path string, dir bool) bool
	// MayWrite says whether the model lets the sandbox write the
	// existing file at path, or bring it into a place it may write (a
	// hard link).
	MayWrite(path string) bool
	// Private says whether dir (absolute, clean, links resolved) is a
	// private creation directory: one the host shares (/dev/shm under
	// the landlock backend), where the sandbox may make new files and
	// reach, write, link, rename and remove only those it made in this
	// launch (the gate records them, MaxMade at most), which the gate
	// removes when the sandbox is gone. Nothing else of it is opened
	// up: the host's own objects there stay out of reach.
	Private(dir string) bool
}

// MaxMade bounds the gate's record of what the sandbox made in private
// creation directories: past it, making another fails with ENOSPC.
const MaxMade = 4096

// Need is what a call needs of the kernel's wall at a path.
type Need int

const (
	// NeedEntry is making or removing the entry at the path: rights on
	// its directory.
	NeedEntry Need = iota
	// NeedWrite is opening the file at the path for writing.
	NeedWrite
	// NeedTruncate is emptying the file at the path (truncate, O_TRUNC).
	NeedTruncate
)

// EntryCalls are the system calls of the entry gate (by bwrap's names;
// those an architecture lacks are skipped there). openat2 stays refused
// with ENOSYS (bwrap's filter): its flags are behind a pointer the
// filter cannot read, so it would have to send every open, reading ones
// too, and callers fall back to openat, which it can test.
var EntryCalls = []string{
	"open", "openat", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
	"unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "truncate",
}

// EntryRules returns r with the entry gate's calls handed to the
// supervisor too: the opens only when they make a file or open one for
// writing (bwrap.Rules.NotifyWriteOpens).
func EntryRules(r bwrap.Rules) bwrap.Rules {
	r.Notify = append(slices.Clone(r.Notify), EntryCalls...)
	r.NotifyWriteOpens = true
	return r
}
