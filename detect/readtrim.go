//go:build !linux

package detect

import (
	"os"
	"strings"
)

// readTrim returns a small file's trimmed contents, "" if unreadable.
func readTrim(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
