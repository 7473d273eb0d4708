package native

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
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

// BenchmarkInitWalls builds an ordinary sandbox (a workspace and a
// TMPDIR writable, /proc, /dev, the filter) with the init of two walls
// and with the init of one (Landlock and the sandbox's own root left
// out), alternated, and reports what the second wall adds: in medians of
// wall time, and in CPU time of the init (user and system, which a
// loaded machine does not inflate as it does wall time):
//
//	go test ./native -run '^$' -bench InitWalls -benchtime 200x
func BenchmarkInitWalls(b *testing.B) {
	if LandlockABI() < MinLandlockABI {
		b.Skip("no usable Landlock ABI here")
	}
	allow := []byte{0x06, 0, 0, 0, 0, 0, 0xff, 0x7f}
	base := Spec{Probe: true, DisableUserns: true, Seccomp: allow,
		ProcReadonly: []string{"/proc/sys"}, ProcMasked: []string{"/proc/keys"},
		Mounts: []Mount{{Path: b.TempDir(), What: "bind"}, {Path: b.TempDir(), What: "bind"}}}
	launch := func(weaken string) (wall, cpu time.Duration) {
		s := base
		s.Weaken = weaken
		cmd, f, err := Command(context.Background(), &s, false, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = []*os.File{f}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, stderr.String())
		}
		return time.Since(t0), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var two, one []time.Duration
	var twoCPU, oneCPU time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternated, each first in turn.
		order := []string{"", "landlock,own-root"}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, w := range order {
			wall, cpu := launch(w)
			if w == "" {
				two, twoCPU = append(two, wall), twoCPU+cpu
			} else {
				one, oneCPU = append(one, wall), oneCPU+cpu
			}
		}
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	n := float64(len(two))
	b.ReportMetric(float64(med(two).Microseconds()), "µs-wall-median-two-walls")
	b.ReportMetric(float64(med(one).Microseconds()), "µs-wall-median-one-wall")
	b.ReportMetric(float64(twoCPU.Microseconds())/n, "µs-cpu-two-walls")
	b.ReportMetric(float64(oneCPU.Microseconds())/n, "µs-cpu-one-wall")
}
