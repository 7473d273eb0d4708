package native

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkLandlockStep times the init's Landlock step alone (the
// ruleset, its rules for an ordinary workspace launch, restrict_self),
// each time on a fresh thread that exits with its domain:
//
//	go test ./native -run '^$' -bench LandlockStep
func BenchmarkLandlockStep(b *testing.B) {
	abi := LandlockABI()
	if abi < MinLandlockABI {
		b.Skipf("Landlock ABI %d: the sandbox has one wall here", abi)
	}
	s := &Spec{Mounts: []Mount{{Path: b.TempDir(), What: "bind"}, {Path: b.TempDir(), What: "bind"}}}
	var total time.Duration
	for b.Loop() {
		done := make(chan error)
		go func() {
			// Never unlocked: the thread ends with the goroutine, and
			// its domain with it.
			runtime.LockOSThread()
			t0 := time.Now()
			err := landlock(s)
			total += time.Since(t0)
			done <- err
		}()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/step")
}
