package launcher

import (
	"os"
	"strconv"
)

// What Exec needs besides itself: the status the native init reports
// ahead of the sandbox's end, and whether stdio can be handed over as
// they are.

// ExitStatus is what Exec returns when the sandbox reported the command's
// status ahead of its own end (the native backend's init, once the command
// and everything else in the sandbox have ended): only the kernel's
// teardown of the sandbox's namespaces was left, 3 to 5 ms a process about
// to exit need not wait for. ProcessState then stays nil.
type ExitStatus struct {
	Code int // the exit code, or 128+N when signal N ended the command
}

func (e *ExitStatus) Error() string {
	return "exit status " + strconv.Itoa(e.Code)
}

// reported waits for the native init's report of the command's status
// (native.Spec.StatusFd). There is none without such an init, or when it
// exited without one (a setup failure, a kill): Wait then takes the
// status from its exit.
func (c *Cmd) reported() (code int, ok bool) {
	if c.status == nil {
		return 0, false
	}
	var b [1]byte
	n, _ := c.status.Read(b[:])
	c.status.Close()
	c.status = nil
	return int(b[0]), n == 1
}

// stdioFiles reports whether stdio can be handed over as they are: no
// goroutine copies them, so nothing is left to finish once the sandbox
// has ended.
func stdioFiles(stdio ...any) bool {
	for _, s := range stdio {
		switch f := s.(type) {
		case nil:
		case *os.File:
			if f == nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}
