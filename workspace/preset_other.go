//go:build !darwin

package workspace

import "github.com/cordon-sandbox/cordon/policy"

// platformRoots adds nothing outside macOS.
func platformRoots(*policy.Resolver) (writable, readonly []string) { return nil, nil }
