//go:build !linux

package conformance

// maxrssUnit is ru_maxrss's unit in bytes: bytes on macOS.
const maxrssUnit = 1
