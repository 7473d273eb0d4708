//go:build !linux

package detect

import "context"

func nativeBinary() string { return "" }

func probeNative(context.Context) Result {
	return Result{Backend: "native", Reason: "the native backend runs only on Linux"}
}
