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
			_, err := landlock(s)
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
// TMPDIR writable, /proc, /dev, the filter) with the init of two walls,
// without its Landlock domain, without its own root, and without both
// (the init of one wall), in rotated order, and reports each one's
// median and minimum wall time and the init's CPU time (user and system,
// which a loaded machine inflates less than wall time). One binary: no
// difference between builds gets in.
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
	variants := []struct{ name, weaken string }{
		{"two-walls", ""}, {"no-landlock", "landlock"}, {"no-own-root", "own-root"}, {"one-wall", "landlock,own-root"},
	}
	walls := make([][]time.Duration, len(variants))
	cpus := make([]time.Duration, len(variants))
	for i := 0; b.Loop(); i++ {
		for j := range variants {
			k := (i + j) % len(variants)
			wall, cpu := launch(variants[k].weaken)
			walls[k], cpus[k] = append(walls[k], wall), cpus[k]+cpu
		}
	}
	for k, v := range variants {
		slices.Sort(walls[k])
		w := walls[k]
		b.ReportMetric(float64(w[len(w)/2].Microseconds()), "µs-wall-median-"+v.name)
		b.ReportMetric(float64(w[0].Microseconds()), "µs-wall-min-"+v.name)
		b.ReportMetric(float64(cpus[k].Microseconds())/float64(len(w)), "µs-cpu-"+v.name)
	}
}
