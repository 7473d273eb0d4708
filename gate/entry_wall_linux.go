package gate

import (
	"runtime"

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

// wallCall is one call for the wall thread.
type wallCall struct {
	umask int // -1: the call makes nothing
	do    func() error
}

// wall is the wall thread's end in the gate.
type wall struct {
	calls  chan wallCall
	done   chan error
	failed bool
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
	if w.calls == nil {
		calls, ready := make(chan wallCall), make(chan error)
		done := make(chan error)
		go wallThread(r, calls, ready, done)
		if err := <-ready; err != nil {
			w.failed = true
			return unix.EACCES
		}
		w.calls, w.done = calls, done
	}
	w.calls <- wallCall{umask: g.ent.umask, do: do}
	return <-w.done
}

// closeWall ends the wall thread, with Serve.
func (g *gate) closeWall() {
	if g.ent.wall.calls != nil {
		close(g.ent.wall.calls)
		g.ent.wall.calls = nil
	}
}

func wallThread(r ThreadRestricter, calls <-chan wallCall, ready, done chan<- error) {
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
	for c := range calls {
		if c.umask >= 0 {
			unix.Umask(c.umask)
		}
		done <- c.do()
	}
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
