//go:build !linux && !darwin

package detect

import (
	"os"
)

// No backend exists on other systems; ownership is unknown, so no path
// is ever trusted there.
func statOwner(os.FileInfo) (uint32, bool) { return 0, false }

func statID(os.FileInfo) (uint64, int64) { return 0, 0 }
