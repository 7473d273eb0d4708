//go:build !linux

// Command tty measures cordon's interactive mode; it runs on Linux.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "bench/tty: Linux only")
	os.Exit(1)
}
