package launcher

import (
	"os/exec"
	"runtime"
	"sync"
)

// The native init is started with PR_SET_PDEATHSIG (it dies with its
// parent), and Linux takes "parent" to be the thread that forked it, not
// the process. Go forks on whatever thread the starting goroutine runs on,
// and the runtime ends a thread when a goroutine that locked it returns
// without unlocking it (a caller that joined another keyring or namespace
// on it does): a sandbox forked earlier on that thread by another
// goroutine would be killed with it, in the middle of its work. So every
// sandbox is forked on one thread kept for the life of the process.

var (
	spawnOnce sync.Once
	spawnReqs chan func()
)

// startOnSpawnThread starts cmd from the spawning thread.
func startOnSpawnThread(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnReqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for f := range spawnReqs {
				f()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnReqs <- func() { errc <- cmd.Start() }
	return <-errc
}
