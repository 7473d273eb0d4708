package launcher

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// mountBudget refuses a launch whose mounts would pass the kernel's
// fs.mount-max, the most mounts one mount namespace may hold, before any
// is made: past it a mount fails midway with ENOSPC, which says nothing
// of why. A new namespace starts as a copy of this one, and the sandbox's
// root is a recursive bind of it (bwrap binds it again beside the old one
// until it pivots), so the peak is twice this namespace's mounts and the
// plan's on top. Each nested repository a workspace holds adds mounts for
// its protected names, and a sandbox can make repositories: the message
// names the numbers and the fix.
func mountBudget(planned int) error {
	limit := testhook.MountMax
	if limit == 0 {
		b, err := os.ReadFile("/proc/sys/fs/mount-max")
		if err != nil {
			return nil // no such knob: nothing to check against
		}
		if limit, err = strconv.Atoi(string(bytes.TrimSpace(b))); err != nil || limit <= 0 {
			return nil
		}
	}
	have := 0
	if b, err := boundedread.File("/proc/self/mountinfo", 64<<20, false); err == nil {
		have = bytes.Count(b, []byte("\n"))
	}
	if need := 2*have + planned; need > limit {
		return fmt.Errorf("the sandbox needs about %d mounts (%d for the policy's roots, twice the %d this mount namespace holds) and fs.mount-max is %d: "+
			"remove nested repositories the workspace does not need, name a narrower --workspace, or raise the limit (sysctl fs.mount-max=%d)", need, planned, have, limit, need+need/2)
	}
	return nil
}
