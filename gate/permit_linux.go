package gate

import (
	"strings"

	"golang.org/x/sys/unix"
)

// permitted checks what the kernel would check for the sandbox's identity
// without capabilities (fs/attr.c, fs/xattr.c, fs/utimes.c): the launcher
// performing the call may have more rights than the sandbox.
func (g *gate) permitted(o op, st *unix.Stat_t, fdPath string, mode, uid, gid uint32, name string, ts *[2]unix.Timespec) unix.Errno {
	owner := st.Uid == g.id.UID
	switch o {
	case opChmod:
		return mayChmod(st, owner, mode)
	case opChown:
		return g.mayChown(st, owner, uid, gid)
	case opSetxattr, opRemovexattr:
		return g.mayXattr(st, owner, fdPath, name)
	default:
		return g.mayTimes(st, owner, fdPath, ts)
	}
}

// mayChmod is chmod's check: the owner only, and no set-ID bits.
func mayChmod(st *unix.Stat_t, owner bool, mode uint32) unix.Errno {
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unix.EOPNOTSUPP // a link's mode cannot change
	}
	if !owner || mode&0o6000 != 0 {
		return unix.EPERM
	}
	return 0
}

// mayChown is chown's check: the owner may give the file to a group of
// its own, and keep its user.
func (g *gate) mayChown(st *unix.Stat_t, owner bool, uid, gid uint32) unix.Errno {
	const keep = ^uint32(0)
	if uid != keep && (uid != st.Uid || !owner) {
		return unix.EPERM // only CAP_CHOWN gives a file away
	}
	if gid != keep && (!owner || (gid != st.Gid && !g.id.inGroup(gid))) {
		return unix.EPERM
	}
	return 0
}

// mayXattr is setxattr's and removexattr's check: user.* attributes on
// a file or directory the sandbox may write.
func (g *gate) mayXattr(st *unix.Stat_t, owner bool, fdPath, name string) unix.Errno {
	if name == "system.posix_acl_access" || name == "system.posix_acl_default" {
		// ACLs are not offered: what a file system without them
		// answers, so that copying tools (sed -i, cp -p) fall back
		// to the mode without a warning.
		return unix.EOPNOTSUPP
	}
	if !strings.HasPrefix(name, "user.") {
		return unix.EPERM // trusted.* and security.* need capabilities
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		if st.Mode&unix.S_ISVTX != 0 && !owner {
			return unix.EPERM
		}
	default:
		return unix.EPERM
	}
	if !g.mayWrite(st, fdPath) {
		return unix.EACCES
	}
	return 0
}

// mayTimes is utimensat's check: explicit times the owner only, the
// current time whoever may write the file too.
func (g *gate) mayTimes(st *unix.Stat_t, owner bool, fdPath string, ts *[2]unix.Timespec) unix.Errno {
	if ts != nil {
		if !owner {
			return unix.EPERM // explicit times: the owner only
		}
	} else if !owner && !g.mayWrite(st, fdPath) {
		return unix.EACCES
	}
	return 0
}

// mayWrite is the kernel's write permission for the sandbox by the mode's
// bits.
func (g *gate) mayWrite(st *unix.Stat_t, fdPath string) bool { return g.may(st, fdPath, 2) }

// may is the kernel's permission for the sandbox by the mode's bits: bit
// 4 read, 2 write, 1 search. An ACL may take away what the bits give (a
// named user's entry), so with one only the owner's class counts.
func (g *gate) may(st *unix.Stat_t, fdPath string, bit uint32) bool {
	switch {
	case st.Uid == g.id.UID:
		return st.Mode&(bit<<6) != 0
	case hasACL(fdPath):
		return false
	case g.id.inGroup(st.Gid):
		return st.Mode&(bit<<3) != 0
	default:
		return st.Mode&bit != 0
	}
}

func hasACL(fdPath string) bool {
	_, err := unix.Getxattr(fdPath, "system.posix_acl_access", nil)
	return err != unix.ENODATA && err != unix.EOPNOTSUPP
}
