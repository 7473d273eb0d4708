//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
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
