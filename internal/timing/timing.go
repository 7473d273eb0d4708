// Package timing prints where a launch's time goes, phase by phase, when
// CORDON_DEBUG_TIMING=1: one line on stderr a phase, from each process of
// the launch (cordon run, the landlock or native init), each with the
// wall clock (so lines of two processes line up) and the time since the
// previous mark of the same process. Off, a mark costs one load and a
// branch: the variable is read once, at package init.
package timing

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

var (
	on             = os.Getenv("CORDON_DEBUG_TIMING") == "1"
	out  io.Writer = os.Stderr
	mu   sync.Mutex
	last time.Time
)

// On reports whether marks are printed.
func On() bool { return on }

// Mark prints that phase ended now, in process proc ("run", "init").
func Mark(proc, phase string) {
	if !on {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	now := time.Now()
	var since time.Duration
	if !last.IsZero() {
		since = now.Sub(last)
	}
	last = now
	fmt.Fprintf(out, "cordon timing: %s %d %-16s %s +%.3f ms\n", proc, os.Getpid(), phase, now.Format("15:04:05.000000"), float64(since.Microseconds())/1000)
}
