package launcher

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/reap"
)

// openLeftovers makes this process a child subreaper (Cmd.KillLeftovers)
// and opens the directory killLeftovers lists its children in.
func openLeftovers() (*os.File, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	f, err := os.OpenFile("/proc/self/task", os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open /proc/self/task to find the command's leftovers: %w", err)
	}
	return f, nil
}

// killLeftovers waits for the sandbox process, the child pid, to end
// (without reaping it: os/exec does), then kills and reaps every other
// child of this process, a child subreaper: what was reparented here.
// The landlock keeper ends the sandbox's processes itself before it
// exits; this is for a keeper that was killed before it could (a
// sandbox process outside Landlock's signal scope, ABI < 6).
//
// tasks is /proc/self/task, opened before the command started: the
// listing opens one file at a time below it and reads this process's
// own children (package reap), never the host's every pid. A listing
// that fails is an error: the leftovers may still run.
func killLeftovers(tasks *os.File, pid int) error {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	if err := reap.TasksOf(tasks).KillAll(pid); err != nil {
		return fmt.Errorf("killing what the command left running: %w", err)
	}
	return nil
}
