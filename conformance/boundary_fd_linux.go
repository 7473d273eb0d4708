package conformance

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openPath opens p as an O_PATH handle, as a harness passing "just a
// reference" to a file or directory might.
func openPath(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open O_PATH %s: %w", p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// openPidfd is a pidfd of process pid.
func openPidfd(pid int) (*os.File, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return os.NewFile(uintptr(fd), "pidfd"), nil
}

// ttyRdev is the device number of the terminal f, as stat -L -c %t:%T
// prints it.
func ttyRdev(f *os.File) string {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return ""
	}
	return fmt.Sprintf("%x:%x", unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

// drainMaster is what waits on the terminal's master side: what the
// user's terminal was sent.
func drainMaster(m *os.File) string {
	fd := int(m.Fd())
	unix.SetNonblock(fd, true)
	defer unix.SetNonblock(fd, false)
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return string(out)
		}
		out = append(out, buf[:n]...)
	}
}

func init() {
	attacks["pidfd-signal"] = func(a []string, out, errw io.Writer) int {
		// A pidfd reaches its process from any pid namespace: kill a
		// process of the host through one handed in.
		if len(a) != 1 {
			return usage(errw, "pidfd-signal FD")
		}
		fd, err := strconv.Atoi(a[0])
		if err != nil {
			return usage(errw, "pidfd-signal FD")
		}
		if err := unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0); err != nil {
			fmt.Fprintln(errw, "pidfd_send_signal:", err)
			return 1
		}
		mark(out, "KILLED")
		return 0
	}
}
