package conformance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
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
		// When the entry NAME is created in the directory WATCH (inotify)
		// and ARMS/arm-NAME exists, take it (unlink: the harness may take
		// it back first, and one of the two wins), exchange A and B for
		// HOLD, exchange them back and touch ARMS/back-NAME. The harness
		// arms one launch at a time, by the name of its first stub, so a
		// swap aims at that launch's chain of stubs and never at another
		// launch's policy lookup; a launch not armed runs beside a swapper
		// known to hold off.
		const use = "swap-on-create WATCH A B HOLD READY STOP ARMS"
		if len(a) != 7 {
			return usage(errw, use)
		}
		hold, err := time.ParseDuration(a[3])
		if err != nil {
			return usage(errw, use)
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
		n, failed := 0, 0
		buf := make([]byte, 64<<10)
		for !exists(a[5]) && time.Now().Before(end) {
			fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}}
			if k, _ := unix.Poll(fds, 100); k <= 0 {
				continue
			}
			k, err := unix.Read(in, buf)
			if err != nil {
				continue
			}
			for _, name := range inotifyNames(buf[:k]) {
				if unix.Unlink(filepath.Join(a[6], "arm-"+name)) != nil {
					continue // not armed, or taken back
				}
				if err := unix.Renameat2(unix.AT_FDCWD, a[1], unix.AT_FDCWD, a[2], unix.RENAME_EXCHANGE); err != nil {
					fmt.Fprintln(errw, "renameat2 RENAME_EXCHANGE:", err)
					failed++
				} else {
					n++
					time.Sleep(hold)
					unix.Renameat2(unix.AT_FDCWD, a[1], unix.AT_FDCWD, a[2], unix.RENAME_EXCHANGE)
				}
				touch(filepath.Join(a[6], "back-"+name))
			}
		}
		fmt.Fprintf(out, "exchanges %d failed %d\n", n, failed)
		mark(out, "SWAPPED")
		return 0
	}
}

// inotifyNames are the names in a read of inotify events.
func inotifyNames(b []byte) []string {
	var names []string
	for len(b) >= unix.SizeofInotifyEvent {
		l := int(binary.NativeEndian.Uint32(b[12:16]))
		if unix.SizeofInotifyEvent+l > len(b) {
			break
		}
		name := b[unix.SizeofInotifyEvent : unix.SizeofInotifyEvent+l]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if len(name) > 0 {
			names = append(names, string(name))
		}
		b = b[unix.SizeofInotifyEvent+l:]
	}
	return names
}
