//go:build !linux

package launcher

// procStart is unknown off Linux; liveness falls back to kill(pid, 0).
func procStart(pid int) string { return "" }
