//go:build !linux

package policy

// lookupEntry describes the entry p as lstat would, by path (see
// lookup_linux.go for what Linux does instead).
func lookupEntry(p string) (linkInfo, error) { return lookupByPath(p) }
