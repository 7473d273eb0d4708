//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
)

// large runs the large-workspace cases (BENCHMARKS.md, "Large
// workspaces"), bwrap and the native backend alternated in one run:
// workspaces with many nested repositories, the 2,000-root policy, and
// how a launch grows with the number of roots.
func large(cfg config, tmp, cordon string, env []string) error {
	// Warm, as the targets are: the stubs a launch makes outlive it for the
	// whole run, where the default second could let them go during
	// bwrap's launches in between (one to six seconds here).
	env = append(slices.Clip(env), "CORDON_STUB_LINGER=10m")
	type variant struct {
		name string
		args []string
		dir  string
	}
	var cases []struct {
		title string
		vs    []variant
	}
	add := func(title, dir string, args ...string) {
		var vs []variant
		for _, b := range []string{"bwrap", "native"} {
			vs = append(vs, variant{name: b, dir: dir, args: append([]string{"run", "--backend", b}, args...)})
		}
		cases = append(cases, struct {
			title string
			vs    []variant
		}{title, vs})
	}
	for _, n := range cfg.repos {
		ws := filepath.Join(tmp, fmt.Sprintf("repos-%d", n))
		if err := makeRepos(ws, n); err != nil {
			return fmt.Errorf("fixture of %d repositories: %w", n, err)
		}
		add(fmt.Sprintf("workspace with %d nested repositories", n), ws, "--workspace", ws, "--", "/bin/true")
	}
	for _, n := range cfg.growth {
		base := filepath.Join(tmp, fmt.Sprintf("roots-%d", n))
		file, err := rootsPolicy(base, n)
		if err != nil {
			return err
		}
		add(fmt.Sprintf("policy of %d roots", n), base, "--policy", file, "--", "/bin/true")
	}
	fmt.Printf("\n== large workspaces: %d rounds each, bwrap and native alternated\n", cfg.largeN)
	fmt.Printf("%-44s %-7s %6s %9s %9s %9s  %s\n", "", "backend", "n", "median", "p95", "min", "")
	for _, c := range cases {
		series := make([]series, len(c.vs))
		refused := make([]string, len(c.vs))
		// A first launch of each, untimed: it makes the stubs, the masks
		// and the scan record that warm launches reuse.
		for i, v := range c.vs {
			if _, err := sample(exec.Command(cordon, v.args...), env, v.dir); err != nil {
				refused[i] = firstLine(err.Error())
			}
		}
		// Making the stubs moved the ctime of every directory they are
		// in, and the scan trusts no stamp younger than two seconds
		// (policy's racyWindow): a launch sooner than that reads those
		// directories again, as a launch a moment after the first one in
		// a workspace does. Warm is later.
		time.Sleep(2100 * time.Millisecond)
		for r := range cfg.largeN {
			for j := range c.vs {
				i := (r + j) % len(c.vs)
				if refused[i] != "" {
					continue
				}
				s, err := sample(exec.Command(cordon, c.vs[i].args...), env, c.vs[i].dir)
				if err != nil {
					return err
				}
				series[i].add(s)
			}
		}
		for i, v := range c.vs {
			if refused[i] != "" {
				msg := refused[i]
				if k := strings.Index(msg, "need"); k >= 0 {
					msg = "refused: " + msg[k:]
				}
				fmt.Printf("%-44s %-7s %s\n", c.title, v.name, clipTo(msg, 90))
				continue
			}
			fmt.Printf("%-44s %-7s %6d %9s %9s %9s\n", c.title, v.name, len(series[i].res), ms(series[i].median()), ms(series[i].p95()), ms(series[i].pct(0)))
		}
	}
	return nil
}

func clipTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// makeRepos makes a workspace repository holding n nested ones, 50 to a
// directory (pNN/rNNNN), each made by git init with a Makefile.
func makeRepos(ws string, n int) error {
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %w: %s", err, out)
	}
	for i := range n {
		r := filepath.Join(ws, fmt.Sprintf("p%02d/r%04d", i/50, i))
		if err := os.MkdirAll(r, 0o755); err != nil {
			return err
		}
		if out, err := exec.Command("git", "init", "-q", r).CombinedOutput(); err != nil {
			return fmt.Errorf("git init: %w: %s", err, out)
		}
		if err := os.WriteFile(filepath.Join(r, "Makefile"), []byte("all:\n\t@echo made\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rootsPolicy writes a policy of n roots under base, in chains of
// denied directories each with a writable child the next one sits in (as
// internal/scale's 2,000-root policy, whose shape it is for n = 2,000),
// and makes the directories.
func rootsPolicy(base string, n int) (string, error) {
	p := policy.FsSandboxPolicy{RestrictWrites: true}
	for t := 0; len(p.DeniedRoots)+len(p.WritableRoots) < n; t++ {
		dir := filepath.Join(base, fmt.Sprintf("tree%03d", t))
		for d := 0; d < 10 && len(p.DeniedRoots)+len(p.WritableRoots) < n; d++ {
			dir = filepath.Join(dir, fmt.Sprintf("d%d", d))
			p.DeniedRoots = append(p.DeniedRoots, dir)
			dir = filepath.Join(dir, "w")
			p.WritableRoots = append(p.WritableRoots, dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
		}
	}
	file := filepath.Join(base, "policy.json")
	data, _ := json.Marshal(p)
	return file, os.WriteFile(file, data, 0o644)
}
