package safefs

import (
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// dirFlags open a directory to resolve names in (macOS has no O_PATH).
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY

// openBeneath opens rel (cleaned, relative) beneath dirfd, following no
// symlink in any component. macOS 11 has O_NOFOLLOW_ANY, but a kernel that
// does not know the flag ignores it, which would follow links silently;
// the walk is correct on every version, at one openat per component.
func openBeneath(dirfd int, rel string, flags int, mode uint32) (int, error) {
	if testhook.SafeFSFollow {
		return unix.Openat(dirfd, rel, (flags|unix.O_CLOEXEC)&^unix.O_NOFOLLOW, mode)
	}
	return walk(dirfd, rel, flags, mode)
}
