//go:build !linux

package conformance

// The mutation check weakens the bwrap backend; it exists on Linux only.
const envMutation = "CORDON_MUTATION"

func mutantMain(string) int { return 2 }
