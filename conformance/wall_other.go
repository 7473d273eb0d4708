//go:build !linux

package conformance

// The wall cases are Linux's (linuxOnly).
func readLease(h *H)        { h.NotApplicable("Linux only") }
func inodeVersionCase(h *H) { h.NotApplicable("Linux only") }
func mqueueCase(h *H)       { h.NotApplicable("Linux only") }
func listmountCase(h *H)    { h.NotApplicable("Linux only") }
func metaSearch(h *H)       { h.NotApplicable("Linux only") }
func utf8Twins(h *H)        { h.NotApplicable("Linux only") }
