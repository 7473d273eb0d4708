// Package boundedread reads a file a sandbox may have planted, up to a
// bound: a FIFO reads as empty instead of blocking, a link to a device is
// refused unopened, and a link to /dev/zero is cut at the bound.
package boundedread

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// ErrNotRegular refuses a file that is not a regular one where only a
// regular file makes sense.
var ErrNotRegular = errors.New("not a regular file")

// File reads name through openForRead, up to max bytes (more is an
// error). With regular, anything but a regular file is refused (a FIFO
// reads as empty otherwise).
func File(name string, max int, regular bool) ([]byte, error) {
	fd, err := openForRead(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	if regular {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
		}
	}
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return b, nil // a FIFO with nothing in it
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		b = append(b, buf[:n]...)
		if len(b) > max {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", max)}
		}
		if n < len(buf) {
			// A regular file reads short only at its end: no call
			// is spent on the empty read that would say so.
			return b, nil
		}
	}
}
