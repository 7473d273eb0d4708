package conformance

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// InSessionKeyring runs f on an OS thread whose session keyring is a new
// one, as a login session's is (pam_keyinit): every process f starts
// inherits it, cordon and the sandbox included. The keyring holds a "user"
// key described desc whose payload is the case's secret. find, called
// within f, reports whether the host can find a "user" key described d in
// that session keyring or the invoker's user keyrings.
func (h *H) InSessionKeyring(desc string, f func(find func(d string) bool)) {
	var caught any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { caught = recover() }()
		// Never unlocked: the thread's keyrings now differ from the
		// process's, so the thread must end with this goroutine. Go forks
		// a child on the thread of the goroutine that starts it.
		runtime.LockOSThread()
		ring, err := unix.KeyctlJoinSessionKeyring("cordon-case-" + h.Secret)
		if err != nil {
			h.NotApplicable("a session keyring of its own: %v", err)
		}
		if _, err := unix.AddKey("user", desc, []byte(h.Secret), ring); err != nil {
			h.NotApplicable("add_key: %v", err)
		}
		f(func(d string) bool {
			for _, r := range []int{ring, unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_USER_SESSION_KEYRING} {
				if _, err := unix.KeyctlSearch(r, "user", d, 0); err == nil {
					return true
				}
			}
			return false
		})
	}()
	<-done
	if caught != nil {
		panic(caught)
	}
}
