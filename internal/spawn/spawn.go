// Package spawn starts processes from one OS thread kept for the life of
// the process.
//
// A child that dies with its parent (PR_SET_PDEATHSIG: cordon's native
// init, bwrap --die-with-parent) dies, on Linux, when the *thread* that
// forked it ends, not the process. Go forks on whatever thread the
// starting goroutine runs on, and the runtime ends a thread when a
// goroutine that locked it returns without unlocking it (a caller that
// joined another keyring or namespace on it does): a sandbox forked
// earlier on that thread by another goroutine would be killed with it, in
// the middle of its work.
package spawn

import (
	"os/exec"
	"runtime"
	"sync"
)

var (
	once sync.Once
	reqs chan func()
)

// Start starts cmd (cmd.Start) from the spawning thread.
func Start(cmd *exec.Cmd) error {
	once.Do(func() {
		reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for f := range reqs {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	reqs <- func() { errc <- cmd.Start() }
	return <-errc
}
