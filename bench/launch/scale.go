//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/bwrap"
	scalepol "github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/policy"
)

func scale(cfg config, tmp, cordon string, filter *os.File, env []string) error {
	base := filepath.Join(tmp, "scale")
	pol := scalepol.Policy2000(base)
	for _, w := range pol.WritableRoots {
		if err := os.MkdirAll(w, 0o755); err != nil {
			return err
		}
	}
	polFile := filepath.Join(tmp, "policy-2000.json")
	data, _ := json.Marshal(pol)
	if err := os.WriteFile(polFile, data, 0o644); err != nil {
		return err
	}

	// Canonicalize + render in this process, as the launcher does them.
	var renderT series
	var plan *bwrap.Plan
	for range 21 {
		start := time.Now()
		c, err := policy.Canonicalize(pol)
		if err != nil {
			return err
		}
		plan, err = bwrap.Render(c, bwrap.Options{EmptyFile: "/dev/null", MaskRoot: "/nonexistent-masks", DisableUserns: true, Stat: osStat})
		if err != nil {
			return err
		}
		renderT.add(result{wall: time.Since(start)})
	}
	argBytes := 0
	for _, a := range plan.Args {
		argBytes += len(a) + 1
	}
	fmt.Printf("\n== scale: %d roots (%d denied, %d writable, nested 100 chains × 10), directories exist\n",
		len(pol.DeniedRoots)+len(pol.WritableRoots), len(pol.DeniedRoots), len(pol.WritableRoots))
	fmt.Printf("canonicalize+render (in process, 21 runs): median %s, max %s (target ≤ 50ms)\n", ms(renderT.median()), ms(renderT.pct(100)))
	fmt.Printf("bwrap arguments: %d, %d bytes, passed through --args FD (ARG_MAX here: %d bytes; bwrap's own limit: %d arguments)\n", len(plan.Args), argBytes, argMax(), bwrapMaxArgs)

	prof, err := profile(cordon, env, tmp, "--backend", "bwrap", "--policy", polFile, "--", "/bin/true")
	if err != nil {
		return err
	}
	if len(missing(prof.Made)) != 0 {
		return fmt.Errorf("scale fixture should need no stubs, profile lists %d", len(prof.Made))
	}
	// Raw bwrap with the same arguments, through --args FD as well.
	argsFile, err := os.CreateTemp(tmp, "bwrap-args-")
	if err != nil {
		return err
	}
	defer argsFile.Close()
	rawArgs := rawArgv(prof, 3)
	for _, a := range rawArgs[1 : len(rawArgs)-1] { // drop the binary and "--"
		io.WriteString(argsFile, a+"\x00")
	}

	// It really confines: a denied directory is not listable, its carve-out
	// is writable, and the sandbox holds every mount.
	check := filepath.Join(base, "tree042", "d0", "w", "d1")
	script := fmt.Sprintf(`! ls %[1]s >/dev/null 2>&1 && touch %[1]s/w/probe && rm %[1]s/w/probe && grep -c . /proc/self/mountinfo`, check)
	var out bytes.Buffer
	cmd := exec.Command(cordon, "run", "--backend", "bwrap", "--policy", polFile, "--", "/bin/sh", "-c", script)
	cmd.Stdout = &out
	if _, err := sample(cmd, env, tmp); err != nil {
		// Report it and go on: a failed launch is the finding.
		fmt.Printf("launch through cordon: FAILED: %v\n", err)
		if len(plan.Args)+4 > bwrapMaxArgs {
			fmt.Printf("(bubblewrap parses at most %d arguments in all, --args file included; this policy renders %d)\n", bwrapMaxArgs, len(plan.Args))
		}
		return nil
	}
	fmt.Printf("launch through cordon: ok (a denied dir unlistable, its writable child writable, %s mounts inside)\n", strings.TrimSpace(out.String()))

	var cordonRun, rawBwrap series
	for i := range cfg.scaleN {
		steps := []func() error{
			func() error {
				s, err := sample(exec.Command(cordon, "run", "--backend", "bwrap", "--policy", polFile, "--", "/bin/true"), env, tmp)
				cordonRun.add(s)
				return err
			},
			func() error {
				cmd, err := rawCmd([]string{prof.Argv[0], "--args", "4", "--", "/bin/true"}, filter, argsFile)
				if err != nil {
					return err
				}
				s, err := sample(cmd, env, tmp)
				rawBwrap.add(s)
				return err
			},
		}
		for j := range steps {
			if err := steps[(i+j)%2](); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%-44s %6s %9s %9s %9s %12s\n", "", "n", "median", "p95", "min", "peak RSS")
	cordonRun.print("cordon run --policy 2000.json -- /bin/true")
	rawBwrap.print("raw bwrap --args FD, same arguments")
	fmt.Printf("ratio median cordon/raw = %.2f\n", ratio(cordonRun.median(), rawBwrap.median()))
	return nil
}

// bwrapMaxArgs is bubblewrap's MAX_ARGS: parse_args_recurse dies past
// 9000 arguments, counting the command line and every --args file.
const bwrapMaxArgs = 9000

func osStat(p string) (exists, dir bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

func argMax() int {
	out, err := exec.Command("getconf", "ARG_MAX").Output()
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}
