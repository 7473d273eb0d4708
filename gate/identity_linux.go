package gate

import "slices"

// inGroup is the kernel's group check for a caller without capabilities:
// its group or one of its supplementary groups.
func (id Identity) inGroup(gid uint32) bool {
	return gid == id.GID || slices.Contains(id.Groups, gid)
}
