package conformance

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// The swappers race cordon's work outside the sandbox (file tools, mount
// stubs) from inside one: they exchange a directory with a symlink to
// somewhere else (renameat2 RENAME_EXCHANGE) while the host side opens
// paths through the directory. Both run until STOP exists (or two minutes
// pass) and touch READY once they are under way.
const swapperLimit = 2 * time.Minute

func init() {
	attacks["swap-loop"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 4 {
			return usage(errw, "swap-loop A B READY STOP")
		}
		end := time.Now().Add(swapperLimit)
		n, fails := 0, 0
		var last error
		for i := 0; ; i++ {
			if err := unix.Renameat2(unix.AT_FDCWD, a[0], unix.AT_FDCWD, a[1], unix.RENAME_EXCHANGE); err != nil {
				fails, last = fails+1, err
				if fails > 1000 && n == 0 {
					fmt.Fprintln(errw, "renameat2 RENAME_EXCHANGE:", err)
					return 1
				}
			} else if n++; n == 1 {
				touch(a[2])
			}
			if i%256 == 0 && (exists(a[3]) || time.Now().After(end)) {
				break
			}
		}
		fmt.Fprintf(out, "exchanges %d failed %d (%v)\n", n, fails, last)
		mark(out, "SWAPPED")
		return 0
	}
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
