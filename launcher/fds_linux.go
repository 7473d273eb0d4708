package launcher

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeOnExec marks every descriptor above stderr close-on-exec. Go opens
// its own files that way, but descriptors this process inherited from its
// parent are not, and os/exec would hand them to the sandbox: a leaked
// directory or socket descriptor is a way out of any mount policy.
// ExtraFiles survive: exec dup2s them into place in the child.
func closeOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
