//go:build !linux && !darwin

package detect

func kernelID() (release, boot string) { return "", "" }

func policyID() string { return "" }

func osProductVersion() string { return "" }

// insideBwrap: bwrap exists only on Linux.
var insideBwrap = func() bool { return false }
