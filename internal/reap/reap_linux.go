// Package reap ends what a child subreaper (PR_SET_CHILD_SUBREAPER) has
// below it: its children, and the orphans of every descendant, which the
// kernel reparents to it. It finds them in the process's own
// /proc/self/task/*/children, never by scanning every pid of the host,
// and stops when waitid says no child is left (ECHILD).
package reap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Tasks is this process's /proc/self/task, opened once: the listing then
// opens one file at a time below it, and nothing else.
type Tasks struct{ dir *os.File }

// OpenTasks opens /proc/self/task.
func OpenTasks() (*Tasks, error) {
	f, err := os.OpenFile("/proc/self/task", os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open /proc/self/task: %w", err)
	}
	return &Tasks{dir: f}, nil
}

// TasksOf is the Tasks of f, a /proc/self/task opened by the caller.
func TasksOf(f *os.File) *Tasks { return &Tasks{dir: f} }

// Close releases the directory.
func (t *Tasks) Close() error { return t.dir.Close() }

// Children are the children of every thread of this process, but except
// (0: none), zombies included. A child of a thread that has just ended is
// reparented to another thread, so a listing may miss it: KillAll lists
// again until waitid finds no child at all.
func (t *Tasks) Children(except int) ([]int, error) {
	fd := int(t.dir.Fd())
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, fmt.Errorf("rewind /proc/self/task: %w", err)
	}
	var out []int
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list /proc/self/task: %w", err)
		}
		if n <= 0 {
			return out, nil
		}
		_, _, names := unix.ParseDirent(buf[:n], -1, nil)
		for _, tid := range names {
			if _, err := strconv.Atoi(tid); err != nil {
				continue
			}
			kids, err := readChildren(fd, tid)
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
				continue // the thread ended: its children moved to another
			}
			if err != nil {
				return nil, err
			}
			for _, k := range kids {
				if k != except {
					out = append(out, k)
				}
			}
		}
	}
}

// readChildren reads task tid's children file in one read: the kernel
// builds it whole for a first read, so it is one consistent listing.
func readChildren(dirfd int, tid string) ([]int, error) {
	fd, err := unix.Openat(dirfd, tid+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			return nil, err
		}
		return nil, fmt.Errorf("open /proc/self/task/%s/children (CONFIG_PROC_CHILDREN): %w", tid, err)
	}
	defer unix.Close(fd)
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read /proc/self/task/%s/children: %w", tid, err)
		}
		if n == 0 {
			break
		}
		b = append(b, buf[:n]...)
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if p, err := strconv.Atoi(string(f)); err == nil && p > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// KillAll kills (SIGKILL) and reaps every child of this process but
// except (0: none; its zombie is left for its own waiter), until none is
// left. Killing one reparents its own children here (before it becomes
// a zombie), so the loop ends when a listing is empty and waitid finds no
// child but except. A child's pid cannot be reused before this process
// reaps it, so the pid a listing found is still that child when it is
// killed. Another goroutine may reap concurrently (ECHILD here).
func (t *Tasks) KillAll(except int) error {
	// The usual end: nothing is left, which one waitid says without a
	// listing (one open and read for each of this process's threads).
	if except == 0 && !t.anyChild(0) {
		return nil
	}
	for {
		kids, err := t.Children(except)
		if err != nil {
			return fmt.Errorf("killing what is left below this process: %w", err)
		}
		if len(kids) == 0 {
			if !t.anyChild(except) {
				return nil
			}
			// A child moving between threads' lists: list again.
			continue
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

// anyChild reports whether this process has a child other than except,
// in any state: by waitid without reaping when there is no except, else
// (waitid cannot leave one out) by a second listing.
func (t *Tasks) anyChild(except int) bool {
	if except > 0 {
		kids, err := t.Children(except)
		return err != nil || len(kids) > 0
	}
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	return err != unix.ECHILD
}
