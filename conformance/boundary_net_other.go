//go:build !linux

package conformance

// stuckListener: the cases that use it are Linux's (linuxOnly).
func (h *H) stuckListener() int {
	h.NotApplicable("a listener with a full accept queue is made on Linux only")
	return 0
}

func synSent(port int) bool { return false }
