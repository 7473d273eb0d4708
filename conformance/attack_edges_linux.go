package conformance

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

func init() {
	attacks["unix-errno"] = func(a []string, out, errw io.Writer) int {
		// unix-errno PATH: connect to the Unix socket PATH and say how it
		// failed (@@ERRNO_EACCES@@, ...) or @@CONNECTED@@; then make a
		// socketpair, which every mode allows, and pass a byte through
		// it (@@PAIR@@).
		if len(a) != 1 {
			return usage(errw, "unix-errno PATH")
		}
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: a[0]})
			unix.Close(fd)
		}
		if err != nil {
			fmt.Fprintln(errw, "unix socket:", err)
			if en, ok := err.(unix.Errno); ok {
				mark(out, "ERRNO_"+unix.ErrnoName(en))
			}
		} else {
			mark(out, "CONNECTED")
		}
		p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(errw, "socketpair:", err)
			return 0
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		b := []byte{0}
		if _, err := unix.Write(p[0], []byte{42}); err == nil {
			if n, err := unix.Read(p[1], b); err == nil && n == 1 && b[0] == 42 {
				mark(out, "PAIR")
			}
		}
		return 0
	}
}
