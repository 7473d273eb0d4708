//go:build !linux

package launcher

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/policy"
)

// fdKind says what descriptor fd is, and whether the sandbox must not be
// given it (see checkDescriptors). There is no O_PATH, pidfd or nsfs
// here.
func fdKind(fd int) (kind string, refuse bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", false, fmt.Errorf("fstat: %w", err)
	}
	return fdKindFromStat(fd, &st)
}

// dataDevice: character devices are not told apart here; Seatbelt's
// profile decides what the sandbox may do with one.
func dataDevice(*unix.Stat_t) bool { return true }

// reopenGain: a descriptor is not reopened through a path here (/dev/fd/N
// duplicates it), so it gives no more than its access mode.
func reopenGain(*os.File, *policy.Canonical) string { return "" }
