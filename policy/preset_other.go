//go:build !darwin

package policy

// platformRoots adds nothing outside macOS.
func platformRoots(resolver) (writable, readonly []string) { return nil, nil }
