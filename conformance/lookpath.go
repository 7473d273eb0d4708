package conformance

import (
	"os/exec"
	"strings"
)

// sandboxPath is PATH inside every case's sandbox.
const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lookPath finds a program on the sandbox's PATH, not the caller's: a tool
// found only under the invoking user's home would not run for the others.
func lookPath(name string) (string, error) {
	for _, d := range strings.Split(sandboxPath, ":") {
		if p, err := exec.LookPath(d + "/" + name); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
