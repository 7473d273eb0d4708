package launcher

import (
	"errors"
	"fmt"
	"strings"
)

// Backend is a sandbox backend's name as a user gives it: one of the
// Backend* constants. ParseBackend is the one place that checks a name;
// Cmd.Backend and Render take the name as a string (string(b)).
type Backend string

// backends are the names ParseBackend accepts, in the order its error
// lists them.
var backends = []Backend{BackendAuto, BackendBwrap, BackendNative, BackendLandlock, BackendSeatbelt, BackendNone}

// ParseBackend returns the backend named s. An unknown name (or an empty
// one) is an error naming it and the names there are.
func ParseBackend(s string) (Backend, error) {
	for _, b := range backends {
		if string(b) == s {
			return b, nil
		}
	}
	return "", fmt.Errorf("backend %q: %w", s, errUnknownBackend)
}

// errUnknownBackend lists the backends.
var errUnknownBackend = errors.New("want " + backendList())

func backendList() string {
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = string(b)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// String returns the name.
func (b Backend) String() string { return string(b) }

// Set parses s with ParseBackend, so that a *Backend is a flag.Value. Its
// error is the reason alone ("want auto, ..."): the flag's user names the
// flag and the value.
func (b *Backend) Set(s string) error {
	v, err := ParseBackend(s)
	if err != nil {
		return errUnknownBackend
	}
	*b = v
	return nil
}
