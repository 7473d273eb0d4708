package conformance

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

func init() {
	attacks["watch"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 1 {
			return usage(errw, "watch DIR")
		}
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err == nil {
			defer unix.Close(fd)
			_, err = unix.InotifyAddWatch(fd, a[0], unix.IN_CREATE|unix.IN_OPEN|unix.IN_DELETE)
		}
		if err != nil {
			fmt.Fprintln(errw, "inotify_add_watch:", a[0], err)
			return 1
		}
		mark(out, "WATCH") // the names of what is made, opened, removed in it
		return 0
	}
}
