package gate

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Under a Rooted decider that is a ThreadRestricter (native: the init
// sends its own Landlock ruleset with the listener), the gate performs
// every call it allows (the create, mkdir, mknod, symlink, rename, link
// and the open of a file an O_CREAT open found) on one thread confined
// by that ruleset: the sandbox's second wall then checks what the gate
// does as it checks what the sandbox does itself, on the same inodes,
// so a mount the gate's resolution wrongly finds writable still stops
// it (docs/threat-model.md, "Two walls"). The serving thread keeps the
// reading: a Landlock domain may not read another domain's /proc/PID
// (its mem, root, cwd and fd links).
//
// The thread is started at the first call, never given back to Go's
// pool (it ends with Serve), has a file-system context of its own (the
// caller's umask is set on it for each call) and no capabilities.
// Starting it fails closed: every call the gate would perform answers
// EACCES.

// The serving thread hands each call to the wall thread, and waits for
// it, through one word and the futex on it, not a Go channel: both
// threads are locked, and a channel between locked goroutines costs
// each hand-over several more trips through Go's scheduler (a dozen
// futex calls per create, BENCHMARKS.md), where one wake each way does.
// The word's atomic stores order what the two threads read of the call.
const (
	wallIdle uint32 = iota
	wallCalled
	wallDone
	wallStop

	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// wall is the wall thread's end in the gate: the call in flight and the
// word the two threads wait on.
type wall struct {
	state   atomic.Uint32
	umask   int // -1: the call makes nothing
	do      func() error
	err     error
	started bool
	failed  bool
}

// perform runs do as the gate's own call: on the wall thread when the
// decider confines one, else on the serving thread (whose capabilities
// are off and whose umask is the caller's by now).
func (g *gate) perform(do func() error) error {
	r, ok := g.d.(ThreadRestricter)
	if !g.own || !ok {
		return do()
	}
	w := &g.ent.wall
	if w.failed {
		return unix.EACCES
	}
	if !w.started {
		ready := make(chan error)
		go wallThread(r, w, ready)
		if err := <-ready; err != nil {
			w.failed = true
			return unix.EACCES
		}
		w.started = true
	}
	w.umask, w.do = g.ent.umask, do
	w.state.Store(wallCalled)
	futexWake(&w.state)
	for w.state.Load() != wallDone {
		futexWait(&w.state, wallCalled)
	}
	w.do = nil
	w.state.Store(wallIdle)
	return w.err
}

// closeWall ends the wall thread, with Serve.
func (g *gate) closeWall() {
	if w := &g.ent.wall; w.started {
		w.state.Store(wallStop)
		futexWake(&w.state)
		w.started = false
	}
}

func wallThread(r ThreadRestricter, w *wall, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
	err := unix.Unshare(unix.CLONE_FS)
	if err == nil {
		err = r.RestrictThread()
	}
	if err == nil {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var none [2]unix.CapUserData
		err = unix.Capset(&hdr, &none[0])
	}
	ready <- err
	if err != nil {
		return
	}
	for {
		switch s := w.state.Load(); s {
		case wallStop:
			return
		case wallCalled:
			if w.umask >= 0 {
				unix.Umask(w.umask)
			}
			w.err = w.do()
			w.state.Store(wallDone)
			futexWake(&w.state)
		default:
			futexWait(&w.state, s)
		}
	}
}

// futexWait sleeps while *word is val (or until a wake, or a signal:
// the callers look again either way).
func futexWait(word *atomic.Uint32, val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWaitPrivate, uintptr(val), 0, 0, 0)
}

// futexWake wakes the thread sleeping on word, if one is.
func futexWake(word *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), futexWakePrivate, 1, 0, 0, 0)
}

// openWalled is openat(2) as the gate's own call (perform).
func (g *gate) openWalled(dir int, name string, flags int, mode uint32) (int, error) {
	fd := -1
	err := g.perform(func() error {
		var err error
		fd, err = unix.Openat(dir, name, flags, mode)
		return err
	})
	return fd, err
}
