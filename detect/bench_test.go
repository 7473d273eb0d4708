package detect_test

import (
	"context"
	"testing"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// BenchmarkProbe is a cold launch's extra cost: one real probe.
func BenchmarkProbe(b *testing.B) {
	testenv.RequireBwrap(b)
	isolate(b)
	for b.Loop() {
		if !detect.Probe(context.Background(), "bwrap").Usable {
			b.Fatal("probe failed")
		}
	}
}

// BenchmarkDetectWarm is a warm launch's cost: a new process (fresh
// in-process state) answering from the disk cache.
func BenchmarkDetectWarm(b *testing.B) {
	testenv.RequireBwrap(b)
	isolate(b)
	ctx := context.Background()
	detect.Detect(ctx, "bwrap") // fill the disk cache
	for b.Loop() {
		detect.Reset()
		detect.Detect(ctx, "bwrap")
	}
	if detect.Probes() != 0 {
		b.Fatalf("warm Detect probed %d times", detect.Probes())
	}
}
