package gate

import (
	"errors"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// act resolves the call's object, asks the Decider and the kernel's own
// rules for the sandbox's identity, and performs the call.
func (g *gate) act(c *call) unix.Errno {
	obj, owned, e := resolve(c)
	if e != 0 {
		return e
	}
	if owned {
		defer unix.Close(obj)
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return errnoOf(err)
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(obj)
	denied := unix.EPERM
	if c.op >= opUtime {
		denied = unix.EACCES
	}
	where, ok := g.pathOf(fdPath, &st)
	if !ok || !g.d.MayChange(where, st.Mode&unix.S_IFMT == unix.S_IFDIR) && !g.ownMade(where, &st) {
		return denied
	}
	// The launcher's walk reached the object with its own rights; the
	// kernel would have asked the sandbox for search on the way.
	if !g.searchable(where) {
		return unix.EACCES
	}
	if e := g.permitted(c.op, &st, fdPath, c.mode, c.uid, c.gid, c.name, c.ts); e != 0 {
		return e
	}
	if testhook.MetagateAct != nil {
		testhook.MetagateAct(int(g.n.pid), where)
	}
	if err := perform(c, obj, fdPath); err != nil {
		return errnoOf(err)
	}
	return 0
}

// perform makes the call on the object resolved.
func perform(c *call, obj int, fdPath string) error {
	switch c.op {
	case opChmod:
		return unix.Fchmodat(unix.AT_FDCWD, fdPath, c.mode, 0)
	case opChown:
		return unix.Fchownat(obj, "", int(int32(c.uid)), int(int32(c.gid)), unix.AT_EMPTY_PATH)
	case opSetxattr:
		return unix.Setxattr(fdPath, c.name, c.value, c.xflags)
	case opRemovexattr:
		return unix.Removexattr(fdPath, c.name)
	default:
		return utimensat(obj, c.ts)
	}
}

// utimensat sets the times of the object obj is (a link itself, when it
// is one), ts nil meaning now.
func utimensat(obj int, ts *[2]unix.Timespec) error {
	empty := [1]byte{}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(obj), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(ts)), unix.AT_EMPTY_PATH, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// errnoOf is err's errno; anything else (none is expected) refuses.
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EPERM
}
