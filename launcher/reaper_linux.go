package launcher

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
//
// With CORDON_REAPER_LOG=FILE in the environment of the launch that starts
// it, the reaper appends one JSON line to FILE for each sweep (a
// sweepResult: what it found and what it removed) and one when it leaves,
// so tests and benchmarks can tell what it did, and when, without waiting
// on a clock.
const reaperName = "cordon-stub-reaper"

// envReaperLog names the file the reaper logs its sweeps to.
const envReaperLog = "CORDON_REAPER_LOG"

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
		return 2 // only ever the registry of this user's state directory
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
	log := os.Getenv(envReaperLog)
	seen := map[string]time.Time{}
	pidfds := map[int]int{}
	for {
		r, err := lockRegistry(dir)
		if err != nil {
			return 1
		}
		res := r.sweep(time.Now(), seen)
		logReaper(log, dir, "sweep", &res)
		if res.Left == 0 {
			logReaper(log, dir, "exit", nil)
			unix.Flock(int(lk.Fd()), unix.LOCK_UN)
			r.unlock()
			return 0
		}
		r.unlock()
		if syncPidfds(pidfds, res.pids) {
			// A holder ended between the sweep and its pidfd: nothing
			// would wake this reaper for it (a killed launch marks
			// nothing done), so sweep again now.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		sleep(in, pidfds, res.wait)
	}
}

// logReaper appends one line about the reaper of the registry dir to the
// file log (none when ""): what happened (event "sweep" or "exit") and,
// for a sweep, what it found and did. It is best effort: a log never
// changes what the reaper does.
func logReaper(log, dir, event string, res *sweepResult) {
	if log == "" {
		return
	}
	b, err := json.Marshal(struct {
		Time     time.Time `json:"time"`
		PID      int       `json:"pid"`
		Registry string    `json:"registry"`
		Event    string    `json:"event"`
		*sweepResult
	}{time.Now().UTC(), os.Getpid(), dir, event, res})
	if err != nil {
		return
	}
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}

// syncPidfds keeps a pidfd open for each live holder's process (pids),
// and none for others, so that sleep wakes when one ends. It reports
// whether a live holder's process had already ended when its pidfd was
// to be opened.
func syncPidfds(fds map[int]int, pids []int) (ended bool) {
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
			fd, err := unix.PidfdOpen(p, 0)
			switch {
			case err == nil:
				fds[p] = fd
			case errors.Is(err, unix.ESRCH):
				ended = true
			}
		}
	}
	return ended
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

// sweepResult is what one sweep found and did. The exported fields are
// what the reaper logs (see envReaperLog).
type sweepResult struct {
	Live  int `json:"live"`  // holders whose launch runs
	Ended int `json:"ended"` // holders whose launch has ended
	// Removed lists the stubs whose time had come, removed unless they
	// were no longer what cordon made.
	Removed []string `json:"removed,omitempty"`
	// Busy lists the stubs whose time had come but that another sandbox
	// mounts over: they stay until it ends.
	Busy []string `json:"busy,omitempty"`
	// Lingering lists the stubs no live holder holds whose linger time
	// runs still.
	Lingering []string `json:"lingering,omitempty"`
	Left      int      `json:"left"` // holder files left; at 0 the reaper leaves

	wait time.Duration // until the next sweep is due (-1: when something happens)
	pids []int         // of the live holders, to wait on
}

// sweep removes the stubs that no live holder holds and whose linger time
// (the longest any ended holder of theirs asked for, counted from when the
// sweep first saw them unheld) has passed, unless a sandbox mounts over
// them. It rewrites or removes ended holders' files to match, and says
// what it did, how long until it should look again, and which holders to
// wait on. seen remembers, across sweeps, when each stub was first seen
// unheld. The caller holds the lock.
func (r *registry) sweep(now time.Time, seen map[string]time.Time) sweepResult {
	hs := r.holders("")
	var res sweepResult
	live := map[string]bool{}
	for _, h := range hs {
		if !h.alive {
			res.Ended++
			continue
		}
		res.Live++
		if pid, _, ok := holderPID(h.name); ok && !h.foreign {
			res.pids = append(res.pids, pid)
		}
		for _, s := range h.file.Stubs {
			live[s.Path] = true
			delete(seen, s.Path)
		}
	}
	unheld, linger := unheldStubs(hs, live)
	due, wait := dueStubs(unheld, linger, seen, now)
	for p := range unheld {
		if _, ok := due[p]; !ok {
			res.Lingering = append(res.Lingering, p)
		}
	}
	// A stub another sandbox mounts over (one that found it as an
	// existing directory: another registry's, or another user's) stays
	// until that sandbox ends.
	busy := removeStubs(due)
	for p := range due {
		if !busy[p] {
			delete(seen, p)
			res.Removed = append(res.Removed, p)
			continue
		}
		delete(due, p)
		res.Busy = append(res.Busy, p)
		wait = soonest(wait, busyRetryAfter(now.Sub(seen[p].Add(linger[p]))))
	}
	if len(res.Removed) > 0 {
		r.stubsRemoved()
	}
	res.Left = r.forget(hs, due, live)
	res.wait = wait
	slices.Sort(res.Removed)
	slices.Sort(res.Busy)
	slices.Sort(res.Lingering)
	return res
}

// unheldStubs are the stubs of ended holders that no live holder holds,
// with the longest linger time any of their ended holders asked for.
func unheldStubs(hs []holder, live map[string]bool) (map[string]stubRecord, map[string]time.Duration) {
	unheld := map[string]stubRecord{}
	linger := map[string]time.Duration{}
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
	return unheld, linger
}

// dueStubs are the unheld stubs whose linger time, counted from when they
// were first seen unheld (seen, which it updates), has passed by now; wait
// is how long until the next one is due (-1: none lingers).
func dueStubs(unheld map[string]stubRecord, linger map[string]time.Duration, seen map[string]time.Time, now time.Time) (map[string]stubRecord, time.Duration) {
	wait := time.Duration(-1)
	due := map[string]stubRecord{}
	for p, s := range unheld {
		first, ok := seen[p]
		if !ok {
			first, seen[p] = now, now
		}
		if left := first.Add(linger[p]).Sub(now); left <= 0 {
			due[p] = s
		} else {
			wait = soonest(wait, left)
		}
	}
	return due, wait
}

// busyRetryAfter is when to look again at a stub another sandbox mounts
// over, overdue by that long: in a second, then less and less often (a
// quarter of how long it has been due, at most every 30s).
func busyRetryAfter(overdue time.Duration) time.Duration {
	return min(max(overdue/4, busyRetry), 30*time.Second)
}

// soonest is the shorter of two waits, where -1 means no wait at all.
func soonest(wait, d time.Duration) time.Duration {
	if wait < 0 || d < wait {
		return d
	}
	return wait
}

// forget brings the ended holders' files in line with a sweep: a stub
// removed (due) or now held by a live holder is dropped from each; a file
// left with no stub is removed. It returns how many holder files are
// left, live ones included.
func (r *registry) forget(hs []holder, due map[string]stubRecord, live map[string]bool) int {
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
	return left
}
