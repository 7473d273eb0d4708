package conformance

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// The swapper races cordon's mount stubs from inside a sandbox: it
// exchanges a directory with a symlink to somewhere else (renameat2
// RENAME_EXCHANGE) while the launcher makes stubs through the directory.
// It runs until STOP exists (or two minutes pass) and touches READY once
// it is under way.
const swapperLimit = 2 * time.Minute

func init() {
	attacks["swap-on-create"] = func(a []string, out, errw io.Writer) int {
		// Exchange A and B for HOLD whenever an entry is created in the
		// directory WATCH (inotify), then exchange them back: aimed at
		// the moment between two mkdirs of a chain of stubs, and out of
		// the way of the next launch's policy lookup.
		if len(a) != 6 {
			return usage(errw, "swap-on-create WATCH A B HOLD READY STOP")
		}
		hold, err := time.ParseDuration(a[3])
		if err != nil {
			return usage(errw, "swap-on-create WATCH A B HOLD READY STOP")
		}
		in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			fmt.Fprintln(errw, "inotify:", err)
			return 1
		}
		if _, err := unix.InotifyAddWatch(in, a[0], unix.IN_CREATE); err != nil {
			fmt.Fprintln(errw, "inotify watch:", err)
			return 1
		}
		touch(a[4])
		end := time.Now().Add(swapperLimit)
		n := 0
		buf := make([]byte, 4096)
		for !exists(a[5]) && time.Now().Before(end) {
			fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}}
			if k, _ := unix.Poll(fds, 100); k <= 0 {
				continue
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a[1], unix.AT_FDCWD, a[2], unix.RENAME_EXCHANGE); err != nil {
				fmt.Fprintln(errw, "renameat2 RENAME_EXCHANGE:", err)
				unix.Read(in, buf)
				continue
			}
			n++
			time.Sleep(hold)
			unix.Renameat2(unix.AT_FDCWD, a[1], unix.AT_FDCWD, a[2], unix.RENAME_EXCHANGE)
			unix.Read(in, buf) // the creates seen meanwhile count as one
		}
		fmt.Fprintf(out, "exchanges %d\n", n)
		mark(out, "SWAPPED")
		return 0
	}
}
