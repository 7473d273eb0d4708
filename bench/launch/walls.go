//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// wallVariant is a native launch through a build of cordon whose init
// leaves out some steps (testhook.NativeWeaken at link time).
type wallVariant struct {
	label, weaken, bin string
	s                  series
}

// wallWeakens are -walls-only's builds besides (an): a control built the
// same way as the others with a weaken that names no step (the cost of
// comparing two builds), then each step of the second wall left out
// alone, then both, as (al).
var wallWeakens = []struct{ label, weaken string }{
	{"(ax) (an) built with -X, leaving out nothing", "none"},
	{"(aL) (an) without the Landlock domain", "landlock"},
	{"(aR) (an) without the sandbox's own root", "own-root"},
}

func (lb *launchBench) buildWallVariants(tmp string) error {
	for i, w := range wallWeakens {
		bin := filepath.Join(tmp, fmt.Sprintf("cordon-weaken%d", i))
		if err := buildCordon(bin, "-ldflags=-X github.com/cordon-sandbox/cordon/internal/testhook.NativeWeaken="+w.weaken); err != nil {
			return err
		}
		lb.walls = append(lb.walls, &wallVariant{label: w.label, weaken: w.weaken, bin: bin})
	}
	return nil
}

// compareWalls alternates (an), (al) and the -walls-only variants alone:
// what the Landlock step (the sandbox's own root, the ruleset,
// restrict_self) adds to a native launch, and which part of it.
func (lb *launchBench) compareWalls() error {
	bins := []string{lb.cordon, lb.oneWall}
	for _, w := range lb.walls {
		bins = append(bins, w.bin)
	}
	for _, bin := range bins { // cold: probe and cache
		if _, err := sample(exec.Command(bin, lb.nativeArgs...), lb.envFor(bin), lb.ws); err != nil {
			return fmt.Errorf("cold native launch (%s): %w", bin, err)
		}
	}
	steps := []func() error{lb.timeNative, lb.timeNativeOneWall}
	for _, w := range lb.walls {
		steps = append(steps, func() error {
			r, err := sample(exec.Command(w.bin, lb.nativeArgs...), lb.envFor(w.bin), lb.ws)
			w.s.add(r)
			return err
		})
	}
	probesBefore := countLines(lb.probeLog)
	for i := range lb.cfg.n {
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
		}
	}
	l := &lb.launches
	fmt.Printf("warm launches: %d probe(s) in %d launches (0: each build keeps its own detection cache)\n", countLines(lb.probeLog)-probesBefore, lb.cfg.n*len(steps))
	fmt.Printf("\n== two walls: %d rounds, order rotated each round\n%-44s %6s %9s %9s %9s %12s\n", lb.cfg.n, "", "n", "median", "p95", "min", "peak RSS")
	l.native.print("(an) cordon run --backend native --workspace W -- /bin/true")
	for _, w := range lb.walls {
		w.s.print(w.label)
	}
	l.nativeOneWall.print("(al) (an) with the init of one wall")
	for _, w := range lb.walls {
		fmt.Printf("(an)-%s median = %s, min = %s, paired median = %s\n", w.label[:4],
			ms(l.native.median()-w.s.median()), ms(l.native.pct(0)-w.s.pct(0)), ms(pairedMedian(l.native, w.s)))
	}
	lb.printWalls()
	return nil
}

// printWalls reports what the Landlock step adds to a native launch.
func (lb *launchBench) printWalls() {
	l := &lb.launches
	fmt.Printf("Landlock step: (an)-(al) median = %s, min = %s, paired median = %s (target ≤ 1 ms; (al) leaves out the Landlock domain and the sandbox's own root)\n",
		ms(l.native.median()-l.nativeOneWall.median()), ms(l.native.pct(0)-l.nativeOneWall.pct(0)), ms(pairedMedian(l.native, l.nativeOneWall)))
}
