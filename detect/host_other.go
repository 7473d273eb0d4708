//go:build !linux && !darwin

package detect

func kernelID() (release, boot string) { return "", "" }

func policyID() string { return "" }

func osProductVersion() string { return "" }

// insideBwrap: bwrap exists only on Linux.
var insideBwrap = func() bool { return false }

// insideNative: the native backend exists only on Linux.
var insideNative = func() bool { return false }

// insideLandlock: the landlock backend exists only on Linux.
var insideLandlock = func() bool { return false }
