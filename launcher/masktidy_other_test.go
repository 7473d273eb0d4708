//go:build !linux

package launcher

import "testing"

// requireListsMasks: masks are Linux's (bwrap and the native init).
func requireListsMasks(*testing.T, int) {}
