package launcher

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// killLeftovers waits for the command, the child pid, to end (without
// reaping it: os/exec does), then kills and reaps every other child of
// this process, a child subreaper (Cmd.KillLeftovers): the command's
// descendants still running were reparented here. Killing one reparents
// its own children here in turn, so the loop ends when a scan finds no
// child left. A child's pid cannot be reused before this process reaps
// it, so the pid a scan found is still that child when it is killed.
//
// proc is /proc, opened before the command started: the scan opens
// nothing else, so a command that lowered this process's RLIMIT_NOFILE
// or filled the system's file table cannot make it find nothing. A scan
// that fails is an error: the leftovers may still run.
func killLeftovers(proc *os.File, pid int) error {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	for {
		kids, err := children(proc, pid)
		if err != nil {
			return fmt.Errorf("killing what the command left running: %w", err)
		}
		if len(kids) == 0 {
			return nil
		}
		for _, k := range kids {
			unix.Kill(k, unix.SIGKILL)
		}
		for _, k := range kids {
			for {
				_, err := unix.Wait4(k, nil, unix.WALL, nil)
				if err != unix.EINTR {
					break
				}
			}
		}
	}
}

// children are this process's children but except, found by asking
// waitid about each pid /proc lists (ECHILD: not a child), which needs
// no descriptor and no parsing. __WALL: a child made by clone with
// another exit signal is a child too.
func children(proc *os.File, except int) ([]int, error) {
	fd := int(proc.Fd())
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, fmt.Errorf("rewind /proc: %w", err)
	}
	var out []int
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list /proc: %w", err)
		}
		if n <= 0 {
			return out, nil
		}
		_, _, names := unix.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			p, err := strconv.Atoi(name)
			if err != nil || p == except {
				continue
			}
			var info unix.Siginfo
			err = unix.Waitid(unix.P_PID, p, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
			if err == nil {
				out = append(out, p)
			}
		}
	}
}
