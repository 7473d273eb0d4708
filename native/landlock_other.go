//go:build !linux

package native

// LandlockABI is 0: Landlock is Linux's.
func LandlockABI() int { return 0 }
