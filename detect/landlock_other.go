//go:build !linux

package detect

import "context"

func probeLandlock(context.Context) Result {
	return Result{Backend: "landlock", Reason: "the landlock backend runs only on Linux"}
}
