package detect

import (
	"context"
	"fmt"

	"github.com/cordon-sandbox/cordon/landlock"
)

// probeLandlock confines cordon's landlock init with a domain granting one
// file and checks that it holds (landlock.Probe): a kernel that reports an
// ABI but whose domain does not refuse is not usable.
func probeLandlock(ctx context.Context) Result {
	r := Result{Backend: "landlock", Path: nativeBinary(), Version: kernelRelease()}
	abi, err := landlock.Probe(ctx, probeTimeout)
	if abi > 0 {
		r.Landlock = fmt.Sprintf("ABI %d", abi)
	}
	if err != nil {
		r.Reason = "the landlock sandbox cannot be built here: " + err.Error()
		return r
	}
	r.Usable = true
	r.Reason = fmt.Sprintf("ok: Landlock ABI %d, seccomp, no capabilities, no_new_privs and a session of its own; no namespaces (no private /tmp, host processes visible)", abi)
	return r
}
