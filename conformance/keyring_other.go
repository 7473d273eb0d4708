//go:build !linux

package conformance

// InSessionKeyring is Linux's: other systems have no kernel keyrings.
func (h *H) InSessionKeyring(desc string, f func(find func(d string) bool)) {
	h.NotApplicable("kernel keyrings are Linux's")
}
