//go:build !linux

// Command launch is cordon's launch benchmark; it measures bubblewrap
// launches and so runs on Linux only (see main.go and BENCHMARKS.md).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "launch: the launch benchmark measures bubblewrap and runs on Linux only; on macOS see 'go test -bench . ./seatbelt'")
	os.Exit(2)
}
