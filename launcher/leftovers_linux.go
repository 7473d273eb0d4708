package launcher

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// killLeftovers waits for the command, the child pid, to end (without
// reaping it: os/exec does), then kills and reaps every other child of
// this process, a child subreaper (Cmd.KillLeftovers): the command's
// descendants still running were reparented here. Killing one reparents
// its own children here in turn, so the loop ends when a scan finds no
// child left. A child's pid cannot be reused before this process reaps
// it, so the pid a scan found is still that child when it is killed.
func killLeftovers(pid int) {
	for {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			break
		}
	}
	self := os.Getpid()
	for {
		kids := slices.DeleteFunc(children(self), func(p int) bool { return p == pid })
		if len(kids) == 0 {
			return
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

// children are the processes whose parent is pid (/proc/PID/stat).
func children(pid int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	for _, n := range names {
		p, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything, so the
		// fields are counted after its last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}
