package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cordon-sandbox/cordon/internal/safefs"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
)

// registry is the stub registry of this user: a directory of holder
// files, one per launch that holds stubs, "PID-START-SEQ.json" while the
// launch runs and "done-PID-START-SEQ.json" once it has ended, read and
// written under one lock (the file "lock"). This launch's own holder file
// is me; live and dead sort what the other holders hold.
type registry struct {
	dir  string
	lock *os.File
	me   string                // this launch's holder file name
	live map[string]stubRecord // stubs held by live launches (not this one)
	dead map[string]stubRecord // stubs held only by ended launches
	mine map[string]stubRecord // stubs this launch holds
	// masks are the masks this launch mounts (their keys), and liveMasks
	// those live launches mount: the tidy removes no mask a live holder
	// lists (masktidy_linux.go).
	masks     []string
	liveMasks map[string]bool
	// reaped: a reaper runs and will remove this launch's stubs after it.
	reaped bool
	// roots are the stubs' roots acquire opened, each once for all the
	// stubs beneath it (a workspace of many repositories has a stub in
	// each); closed when acquire returns.
	roots map[string]*safefs.Root
	// stubMade, when set, is called after each stub acquire makes (the
	// launcher's test hook, testhook.Launch's "stub").
	stubMade func()
}

// holderFile is what one holder file holds.
type holderFile struct {
	// LingerMS is how long the stubs stay after this holder ends, when no
	// other live holder holds them.
	LingerMS int64        `json:"linger_ms"`
	Stubs    []stubRecord `json:"stubs"`
	// Masks are the keys of the masks the holder's sandbox mounts.
	Masks []string `json:"masks,omitempty"`
	// PidNS is the inode of the holder's pid namespace: its pid means
	// nothing in another one (a launch under 'unshare -p', in a
	// container sharing HOME), where the holder is never judged ended.
	PidNS uint64 `json:"pidns,omitempty"`
}

// selfPidNS is the inode of this process's pid namespace, 0 when it
// cannot be read.
var selfPidNS = sync.OnceValue(func() uint64 {
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
})

// holderSeq numbers this process's launches, for their holder files' names.
var holderSeq atomic.Int64

// donePrefix marks the holder file of a launch that has ended.
const donePrefix = "done-"

// removedStamp is the file whose modification time says when stubs were
// last removed (touched under the lock after each removal): a launch whose
// view of the host (policy.Canonical.ViewTime) is older may have seen as
// present a stub that is gone now, and is no longer in the registry.
const removedStamp = "removed"

// stampMargin covers the coarse clock of file times against time.Now.
const stampMargin = 50 * time.Millisecond

// stubsRemoved records, under the lock, that stubs were (or may have
// been) removed just now.
func (r *registry) stubsRemoved() {
	if r.dir == "" {
		return // a registry of tests, on no directory
	}
	p := filepath.Join(r.dir, removedStamp)
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|syscall.O_CLOEXEC, 0o600); err == nil {
			f.Close()
		}
	}
}

// removedSince reports whether stubs may have been removed at t or later,
// so that a view of the host begun at t may show a removed stub as present.
func (r *registry) removedSince(t time.Time) bool {
	fi, err := os.Stat(filepath.Join(r.dir, removedStamp))
	if err != nil {
		return !os.IsNotExist(err)
	}
	return !fi.ModTime().Before(t.Add(-stampMargin))
}

// registryDir is the registry of this user, in the runtime directory, made
// if need be.
func registryDir() (string, error) {
	rt, err := runtimeDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(rt, "stubs")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("stub registry: %w", err)
	}
	return dir, nil
}

// openRegistry takes the registry's lock and loads what every holder
// holds. Call unlock when done.
func openRegistry() (*registry, error) {
	dir, err := registryDir()
	if err != nil {
		return nil, err
	}
	r, err := lockRegistry(dir)
	if err != nil {
		return nil, err
	}
	r.me = fmt.Sprintf("%d-%s-%d.json", os.Getpid(), procStart(os.Getpid()), holderSeq.Add(1))
	r.load("")
	return r, nil
}

func lockRegistry(dir string) (*registry, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stub registry: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("stub registry: lock: %w", err)
	}
	return &registry{dir: dir, lock: f, mine: map[string]stubRecord{}}, nil
}

func (r *registry) unlock() {
	unix.Flock(int(r.lock.Fd()), unix.LOCK_UN)
	r.lock.Close()
}

// holder is one holder file as read.
type holder struct {
	name  string
	alive bool
	// foreign: the holder's pid is another pid namespace's; it counts as
	// alive, and no pidfd is opened for it.
	foreign bool
	file    holderFile
}

// holders reads every holder file but skip's; unreadable ones are
// removed, and so are those of ended launches that held no stubs (only
// masks): they hold nothing once their launch has ended.
func (r *registry) holders(skip string) []holder {
	ents, _ := os.ReadDir(r.dir)
	var hs []holder
	for _, d := range ents {
		name := d.Name()
		if !strings.HasSuffix(name, ".json") || name == skip {
			continue
		}
		var h holder
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil || json.Unmarshal(b, &h.file) != nil {
			os.Remove(filepath.Join(r.dir, name))
			continue
		}
		h.name = name
		if ns := h.file.PidNS; ns != 0 && ns != selfPidNS() {
			h.alive, h.foreign = true, true
			hs = append(hs, h)
			continue
		}
		h.alive = holderAlive(name)
		if !h.alive && len(h.file.Stubs) == 0 {
			os.Remove(filepath.Join(r.dir, name))
			continue
		}
		hs = append(hs, h)
	}
	return hs
}

// load sorts what the holders hold into live and dead.
func (r *registry) load(skip string) {
	r.live, r.dead = map[string]stubRecord{}, map[string]stubRecord{}
	r.liveMasks = map[string]bool{}
	hs := r.holders(skip)
	for _, h := range hs {
		if !h.alive {
			continue
		}
		for _, s := range h.file.Stubs {
			r.live[s.Path] = s
		}
		for _, m := range h.file.Masks {
			r.liveMasks[m] = true
		}
	}
	for _, h := range hs {
		for _, s := range h.file.Stubs {
			if _, ok := r.live[s.Path]; !h.alive && !ok {
				r.dead[s.Path] = s
			}
		}
	}
}

func (r *registry) held(p string) (stubRecord, bool) {
	if s, ok := r.live[p]; ok {
		return s, true
	}
	s, ok := r.dead[p]
	return s, ok
}

// writeHolder replaces a holder file atomically.
func writeHolder(path string, h holderFile) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

// holderPID reads "PID-START-SEQ.json" (done-… files have ended).
func holderPID(name string) (pid int, start string, ok bool) {
	parts := strings.SplitN(strings.TrimSuffix(name, ".json"), "-", 3)
	if len(parts) != 3 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, "", false
	}
	return pid, parts[1], true
}

// holderAlive checks that the holder's process still runs and started
// when it did (a recycled pid is not the holder). A running process whose
// start cannot be read (out of descriptors) counts as the holder: ended
// is only what was seen to end.
func holderAlive(name string) bool {
	pid, start, ok := holderPID(name)
	if !ok || exited(pid) {
		return false
	}
	got := procStart(pid)
	return got == "" || got == start
}

// exited reports whether pid has ended, also when it is a zombie its
// parent has not collected yet. A process in the middle of execve from a
// thread other than its leader shows its leader as a zombie for a moment
// (/proc/PID/stat says Z); its pidfd does not report it ended, so only
// the pidfd is asked.
func exited(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errors.Is(err, unix.ESRCH) || unix.Kill(pid, 0) == unix.ESRCH
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&unix.POLLIN != 0
}
