//go:build !linux

package launcher

import "os"

// removeTree removes dir and what is in it; a directory in it that is not
// writable stays (the Linux tidy opens such directories up first).
func removeTree(dir string) { os.RemoveAll(dir) }
