package native

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LandlockABI is the best Landlock ABI this kernel offers to this
// process, 0 when it has none (not built in, off at boot, or refused by
// a seccomp profile around cordon).
func LandlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || int(v) < 0 {
		return 0
	}
	return int(v)
}

// rulesetAttr is struct landlock_ruleset_attr up to its scopes (ABI 6);
// older kernels accept it, its tail being zero.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// landlock confines this thread (and what it forks) with the Landlock
// domain PlanLandlock renders for s: on a kernel without a usable ABI it
// does nothing, and the sandbox keeps its mounts as its one wall. With
// an entry gate it returns the ruleset (close-on-exec, as Landlock makes
// it; else -1), which the init sends out with the listener: the gate
// performs its calls on a thread confined by it (gate, "wall").
func landlock(s *Spec) (int, error) {
	if s.weakened("landlock") {
		return -1, nil
	}
	p, ok := PlanLandlock(s, LandlockABI(), inheritedFDs(s))
	if !ok {
		return -1, nil
	}
	attr := rulesetAttr{handledFS: p.HandledFS, scoped: p.Scoped}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return -1, fmt.Errorf("landlock (ABI %d): create ruleset: %w", p.ABI, errno)
	}
	rfd := int(r)
	keep := false
	defer func() {
		if !keep {
			unix.Close(rfd)
		}
	}()
	for _, r := range p.Rules {
		if err := addRule(rfd, r); err != nil {
			return -1, fmt.Errorf("landlock (ABI %d): %w", p.ABI, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rfd), 0, 0); errno != 0 {
		return -1, fmt.Errorf("landlock (ABI %d): restrict self: %w", p.ABI, errno)
	}
	if s.Gate <= 0 {
		return -1, nil
	}
	keep = true
	return rfd, nil
}

// llFileRights are all the rights Landlock takes on a rule whose object
// is a file (LANDLOCK_ACCESS_FILE).
const llFileRights = llExecute | llReadFile | llWriteFile | llTruncate | llIoctlDev

// addRule adds r to the ruleset rfd. A fixed path the sandbox lacks
// (/dev/shm, /proc under a mutation) is skipped; a descriptor on a
// file system Landlock does not take rules on (EBADFD: pipes, sockets,
// anonymous inodes, which it does not restrict either) likewise.
func addRule(rfd int, r LandlockRule) error {
	fd := r.FD
	if r.Path != "" {
		var err error
		fd, err = unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) && (r.Path == "/dev/shm" || r.Path == "/proc") {
				return nil
			}
			return fmt.Errorf("open %s: %w", r.Path, err)
		}
		defer unix.Close(fd)
	}
	access := r.Access
	// A rule on a file (a writable or read-only root that is a file)
	// takes only the rights that apply to a file: the kernel refuses
	// the directory ones (EINVAL).
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	switch {
	case errno == 0:
		return nil
	case errno == unix.EBADFD && r.Path == "":
		return nil
	case r.Path != "":
		return fmt.Errorf("rule on %s: %w", r.Path, errno)
	default:
		return fmt.Errorf("rule on descriptor %d: %w", r.FD, errno)
	}
}

// inheritedFDs are the descriptors the command inherits that name a file
// Landlock can take a rule on: regular files, devices and named pipes, with the access
// their open mode gives. Directories and O_PATH handles get nothing: what
// is beneath them is decided by the tree.
func inheritedFDs(s *Spec) []InheritedFD {
	var out []InheritedFD
	for fd := 0; fd < 3+s.Files; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		mode := st.Mode & unix.S_IFMT
		if mode != unix.S_IFREG && mode != unix.S_IFCHR && mode != unix.S_IFBLK && mode != unix.S_IFIFO {
			continue
		}
		if slices.Contains(s.Closed, fd) {
			continue
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_PATH != 0 {
			continue
		}
		f := InheritedFD{FD: fd, Device: mode != unix.S_IFREG}
		switch fl & unix.O_ACCMODE {
		case unix.O_RDONLY:
			f.Read = true
		case unix.O_WRONLY:
			f.Write = true
		case unix.O_RDWR:
			f.Read, f.Write = true, true
		}
		out = append(out, f)
	}
	return out
}
