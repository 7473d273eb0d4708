package launcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The stub reaper is a small background process, one per registry, that
// removes mount stubs once no live sandbox holds them and their linger
// time has passed. It lets a launch end (or exec bwrap in its own place,
// Cmd.Exec) without removing anything itself, and it cleans up after a
// launch that was killed.
//
// It is this same binary, started again as /proc/self/exe with argv[0]
// reaperName: the init below runs it in any program that links the
// launcher, before that program's main (init functions of packages the
// launcher does not depend on may run first, as in any re-executed Go
// program). It holds reaper.lock (flock) for
// its whole life, so a launch knows whether one runs; it leaves only
// under the registry lock, once no holder file is left, so a launch that
// saw it running is sure to be seen by it.
const reaperName = "cordon-stub-reaper"

func init() {
	if len(os.Args) == 2 && os.Args[0] == reaperName {
		os.Exit(reaperMain(os.Args[1]))
	}
}

func reaperLockPath(dir string) string { return filepath.Join(dir, "reaper.lock") }

// busyRetry is how often the reaper looks again at a stub that another
// sandbox mounts over.
const busyRetry = time.Second

// ensureReaper starts a reaper unless one is running. The caller holds the
// registry lock.
func ensureReaper(dir string) error {
	lk, err := os.OpenFile(reaperLockPath(dir), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer lk.Close()
	if err := unix.Flock(int(lk.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil // one runs
		}
		return err
	}
	unix.Flock(int(lk.Fd()), unix.LOCK_UN)
	if !testhook.SkipCloseOnExec {
		closeOnExec() // a long-lived child keeps no inherited pipe open
	}
	cmd := exec.Command("/proc/self/exe", dir)
	cmd.Args[0] = reaperName
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // no zombie in a long-lived caller
	return nil
}

// reaperMain is the reaper's life: sweep, then sleep until a holder ends
// (its pidfd), the registry changes (inotify) or a linger time runs out.
func reaperMain(dir string) int {
	if d, err := registryDir(); err != nil || d != dir {
		return 2 // only ever the registry this user and TMPDIR would use
	}
	lk, err := os.OpenFile(reaperLockPath(dir), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return 1
	}
	if unix.Flock(int(lk.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return 0 // another reaper runs
	}
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		in = -1
	} else if _, err := unix.InotifyAddWatch(in, dir, unix.IN_MOVED_TO); err != nil {
		unix.Close(in)
		in = -1
	}
	seen := map[string]time.Time{}
	pidfds := map[int]int{}
	for {
		r, err := lockRegistry(dir)
		if err != nil {
			return 1
		}
		wait, pids, empty := r.sweep(time.Now(), seen)
		if empty {
			unix.Flock(int(lk.Fd()), unix.LOCK_UN)
			r.unlock()
			return 0
		}
		r.unlock()
		syncPidfds(pidfds, pids)
		sleep(in, pidfds, wait)
	}
}

func syncPidfds(fds map[int]int, pids []int) {
	want := map[int]bool{}
	for _, p := range pids {
		want[p] = true
	}
	for p, fd := range fds {
		if !want[p] {
			unix.Close(fd)
			delete(fds, p)
		}
	}
	for p := range want {
		if _, ok := fds[p]; !ok {
			if fd, err := unix.PidfdOpen(p, 0); err == nil {
				fds[p] = fd
			}
		}
	}
}

// sleep waits for a holder to end, a holder file to appear or be marked
// done, or wait to pass. It never sleeps longer than a minute (a holder
// whose pidfd could not be had is checked that often), nor less than 10ms
// (a burst of events costs one sweep, not one each).
func sleep(in int, pidfds map[int]int, wait time.Duration) {
	fds := make([]unix.PollFd, 0, len(pidfds)+1)
	if in >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(in), Events: unix.POLLIN})
	}
	for _, fd := range pidfds {
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	if wait < 0 || wait > time.Minute {
		wait = time.Minute
	}
	time.Sleep(10 * time.Millisecond)
	unix.Poll(fds, int(wait.Milliseconds())+1)
	if in >= 0 {
		var buf [4096]byte
		for {
			if n, err := unix.Read(in, buf[:]); n <= 0 || err != nil {
				break
			}
		}
	}
}

// sweep removes the stubs that no live holder holds and whose linger time
// (the longest any ended holder of theirs asked for, counted from when the
// sweep first saw them unheld) has passed, unless a sandbox mounts over
// them. It rewrites or removes ended holders' files to match, and returns
// how long until it should look again (-1: only when something happens),
// the pids of live holders, and whether no holder file is left. The caller
// holds the lock.
func (r *registry) sweep(now time.Time, seen map[string]time.Time) (wait time.Duration, pids []int, empty bool) {
	hs := r.holders("")
	live := map[string]bool{}
	for _, h := range hs {
		if !h.alive {
			continue
		}
		if pid, _, ok := holderPID(h.name); ok {
			pids = append(pids, pid)
		}
		for _, s := range h.file.Stubs {
			live[s.Path] = true
			delete(seen, s.Path)
		}
	}
	linger := map[string]time.Duration{}
	unheld := map[string]stubRecord{}
	for _, h := range hs {
		if h.alive {
			continue
		}
		for _, s := range h.file.Stubs {
			if !live[s.Path] {
				unheld[s.Path] = s
				linger[s.Path] = max(linger[s.Path], time.Duration(h.file.LingerMS)*time.Millisecond)
			}
		}
	}
	wait = -1
	due := map[string]stubRecord{}
	for p, s := range unheld {
		first, ok := seen[p]
		if !ok {
			first, seen[p] = now, now
		}
		if left := first.Add(linger[p]).Sub(now); left <= 0 {
			due[p] = s
		} else if wait < 0 || left < wait {
			wait = left
		}
	}
	// A stub another sandbox mounts over (one that found it as an
	// existing directory: another registry's, or another user's) stays
	// until that sandbox ends. Look again in a second, then less and less
	// often (a quarter of how long it has been due, at most every 30s).
	busy := removeStubs(due)
	for p := range due {
		if !busy[p] {
			delete(seen, p)
			continue
		}
		delete(due, p)
		retry := min(max(now.Sub(seen[p].Add(linger[p]))/4, busyRetry), 30*time.Second)
		if wait < 0 || wait > retry {
			wait = retry
		}
	}
	left := 0
	for _, h := range hs {
		if h.alive {
			left++
			continue
		}
		var keep []stubRecord
		for _, s := range h.file.Stubs {
			if _, gone := due[s.Path]; !gone && !live[s.Path] {
				keep = append(keep, s)
			}
		}
		path := filepath.Join(r.dir, h.name)
		switch {
		case len(keep) == 0:
			os.Remove(path)
		case len(keep) < len(h.file.Stubs):
			h.file.Stubs = keep
			writeHolder(path, h.file)
			left++
		default:
			left++
		}
	}
	return wait, pids, left == 0
}
