//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/workspace"
)

// inProcess runs launches through the launcher package in this process, so
// a CPU profile shows cordon's own work per launch without process start.
func inProcess(cfg config, tmp, ws string) error {
	os.Setenv(state.EnvDir, filepath.Join(tmp, "state", "cordon"))
	ctx := context.Background()
	launchOnce := func() error {
		p, err := workspace.Preset(ws, workspace.Options{})
		if err != nil {
			return err
		}
		cmd := launcher.CommandContext(ctx, p, "/bin/true")
		cmd.TmpDir = workspace.PrivateTmpDir(p.WritableRoots[0])
		cmd.CacheDir = workspace.PrivateCacheDir(p.WritableRoots[0])
		return cmd.Run()
	}
	if err := launchOnce(); err != nil { // warm the detection cache
		return err
	}
	var presetT, renderT, runT series
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for range cfg.inproc {
		t0 := time.Now()
		p, err := workspace.Preset(ws, workspace.Options{})
		if err != nil {
			return err
		}
		t1 := time.Now()
		if _, err := launcher.Render(ctx, p, "bwrap", false, nil, []string{"/bin/true"}); err != nil {
			return err
		}
		t2 := time.Now()
		if err := launchOnce(); err != nil {
			return err
		}
		presetT.add(result{wall: t1.Sub(t0)})
		renderT.add(result{wall: t2.Sub(t1)})
		runT.add(result{wall: time.Since(t2)})
	}
	fmt.Printf("in-process, %d launches (no process start, detection warm in memory)\n", cfg.inproc)
	fmt.Printf("%-44s %6s %9s %9s %9s\n", "", "n", "median", "p95", "min")
	for _, x := range []struct {
		name string
		s    series
	}{{"workspace.Preset (preset + bounded scan)", presetT}, {"launcher.Render (canonicalize + render)", renderT}, {"preset + launcher.Run of /bin/true", runT}} {
		fmt.Printf("%-44s %6d %9s %9s %9s\n", x.name, len(x.s.res), ms(x.s.median()), ms(x.s.p95()), ms(x.s.pct(0)))
	}
	if cfg.cpuprofile != "" {
		fmt.Println("cpu profile:", cfg.cpuprofile, "(go tool pprof -top", cfg.cpuprofile+")")
	}
	return nil
}

// inProcessWalls alternates, in this process, native launches of ws
// through the launcher package (as 'cordon run' makes them: Exec, which
// returns at the init's report of the status) with the init of two
// walls, without its Landlock domain, without its own root, and without
// both: one binary, the hardening steps chosen per launch
// (testhook.NativeWeaken), so no difference between two builds gets in,
// and no process start of cordon's.
func inProcessWalls(cfg config, tmp, ws string) error {
	os.Setenv(state.EnvDir, filepath.Join(tmp, "state", "cordon"))
	launchOnce := func(weaken string) (time.Duration, error) {
		testhook.NativeWeaken = weaken
		defer func() { testhook.NativeWeaken = "" }()
		t0 := time.Now()
		p, err := workspace.Preset(ws, workspace.Options{})
		if err != nil {
			return 0, err
		}
		cmd := launcher.Command(p, "/bin/true")
		cmd.Backend = launcher.BackendNative
		cmd.TmpDir = workspace.PrivateTmpDir(p.WritableRoots[0])
		cmd.CacheDir = workspace.PrivateCacheDir(p.WritableRoots[0])
		err = cmd.Exec()
		var st *launcher.ExitStatus
		if errors.As(err, &st) && st.Code == 0 {
			err = nil
		}
		return time.Since(t0), err
	}
	variants := []struct{ label, weaken string }{
		{"(an) two walls", ""},
		{"(aL) without the Landlock domain", "landlock"},
		{"(aR) without the sandbox's own root", "own-root"},
		{"(al) one wall (neither)", "landlock,own-root"},
	}
	for _, v := range variants { // warm the detection cache and the stubs
		if _, err := launchOnce(v.weaken); err != nil {
			return fmt.Errorf("%s: %w", v.label, err)
		}
	}
	s := make([]series, len(variants))
	for i := range cfg.inproc {
		for j := range variants {
			k := (i + j) % len(variants)
			// With -gap, the previous sandbox's teardown, which runs
			// after the init reported the status, ends before the next
			// launch instead of sharing the two cores with it.
			time.Sleep(cfg.gap)
			d, err := launchOnce(variants[k].weaken)
			if err != nil {
				return fmt.Errorf("%s: %w", variants[k].label, err)
			}
			s[k].add(result{wall: d})
		}
	}
	fmt.Printf("\n== two walls in process: %d rounds, order rotated each round, %s between launches (preset + launcher Exec of /bin/true, native)\n%-44s %6s %9s %9s %9s\n", cfg.inproc, cfg.gap, "", "n", "median", "p95", "min")
	for k, v := range variants {
		fmt.Printf("%-44s %6d %9s %9s %9s\n", v.label, len(s[k].res), ms(s[k].median()), ms(s[k].p95()), ms(s[k].pct(0)))
	}
	for k := 1; k < len(variants); k++ {
		fmt.Printf("(an)-%s median = %s, min = %s, paired median = %s\n", variants[k].label[:4],
			ms(s[0].median()-s[k].median()), ms(s[0].pct(0)-s[k].pct(0)), ms(pairedMedian(s[0], s[k])))
	}
	return nil
}
