//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// landstripVersion is the landstrip the peer row runs: its native binary
// for linux-x64 (the npm package's wrapper would add a node start), pinned
// so that a row means the same program from run to run.
const landstripVersion = "0.19.2"

// The peer comparison (-peers N): the ordinary launch of /bin/true in a
// small git workspace, as the user running the benchmark, round by round
// in rotated order, through
//
//	(ak) cordon run --backend landlock --workspace W
//	(ls) landstrip run -p P, with the policy a user writes for the same
//	     job (the workspace writable, no network, ~/.ssh unreadable)
//	(an) cordon run --backend native --workspace W
//	(b)  raw bwrap with the argv cordon renders for W (stubs made before
//	     each launch, outside the timing): the floor of a mount-namespace
//	     sandbox with the same mounts
//	(g1) the minimal Go launcher → /bin/true, and (g2) that launcher
//	     started by itself → /bin/true: the floor of a launch with one Go
//	     start and with two (the landlock backend's launcher and keeper)
//	(ak0), (an0) with -before B: (ak) and (an) through the cordon binary
//	     B, in the same rounds, for a before/after of one run
//
// and then, with -hosts N, the same rounds again with N more processes on
// the host (sleepers started here and killed after): what grows with the
// host's processes.
type peerBench struct {
	cfg              config
	cordon, ws       string
	before           string // -before: the cordon binary of (ak0), (an0)
	goLauncher       string // (g1), (g2)
	landstrip, lsPol string // empty landstrip: not found, (ls) left out
	env              []string
	raw              []string
	stubs            []string
	filter           *os.File
}

type peerSeries struct {
	landlock, landstrip, native, rawBwrap series
	go1, go2, landlock0, native0          series
}

func peers(cfg config, tmp, ws string) error {
	cordon := cfg.cordonBin
	if cordon == "" {
		cordon = filepath.Join(tmp, "cordon")
		if err := buildCordon(cordon); err != nil {
			return err
		}
	}
	// cordon's state stays where the user's is: a state directory under
	// the benchmark's temporary directory in /tmp would make the landlock
	// plan split /tmp (BENCHMARKS.md, "The landlock backend beside the
	// others"), which a user's launch does not pay.
	pb := &peerBench{cfg: cfg, cordon: cordon, ws: ws, before: cfg.before, env: append(os.Environ(), "CORDON_STUB_LINGER=10m")}
	pb.goLauncher = filepath.Join(tmp, "golauncher")
	if err := buildGoLauncher(filepath.Join(tmp, "golauncher-src"), pb.goLauncher); err != nil {
		return err
	}
	prof, err := profile(cordon, pb.env, ws, "--backend", "bwrap", "--workspace", ws, "--", "/bin/true")
	if err != nil {
		return err
	}
	if pb.filter, err = seccompFile(tmp); err != nil {
		return err
	}
	defer pb.filter.Close()
	pb.raw, pb.stubs = rawArgv(prof, 3, "/bin/true"), prof.Made
	pb.landstrip = findLandstrip(cfg)
	pb.lsPol = filepath.Join(tmp, "landstrip-policy.json")
	if err := os.WriteFile(pb.lsPol, []byte(`{"filesystem":{"allowWrite":["."],"denyRead":["~/.ssh"]},"network":{"allowNetwork":false}}`), 0o644); err != nil {
		return err
	}
	printMachine(ws)
	fmt.Printf("user: uid %d; cordon: %s\n", os.Getuid(), cordon)
	if pb.landstrip != "" {
		if _, err := sample(exec.Command(pb.landstrip, "run", "-p", pb.lsPol, "--", "/bin/true"), pb.env, ws); err != nil {
			fmt.Printf("landstrip: %s does not run here: %v\n", pb.landstrip, err)
			pb.landstrip = ""
		}
	}
	base, err := pb.rounds("")
	if err != nil {
		return err
	}
	pb.report(fmt.Sprintf("%d rounds", cfg.peers), base)
	if cfg.hosts <= 0 {
		return nil
	}
	stop, err := sleepers(cfg.hosts)
	if err != nil {
		return err
	}
	crowd, err := pb.rounds(fmt.Sprintf(" with %d more host processes", cfg.hosts))
	stop()
	if err != nil {
		return err
	}
	pb.report(fmt.Sprintf("%d rounds, %d more host processes", cfg.peers, cfg.hosts), crowd)
	pb.growth(base, crowd)
	return nil
}

// rounds times each variant once a round, the order rotated, after one
// untimed launch of each.
func (pb *peerBench) rounds(what string) (peerSeries, error) {
	var s peerSeries
	type variant struct {
		s   *series
		run func() (result, error)
	}
	cordonRun := func(bin, backend string) func() (result, error) {
		return func() (result, error) {
			return sample(exec.Command(bin, "run", "--backend", backend, "--workspace", pb.ws, "--", "/bin/true"), pb.env, pb.ws)
		}
	}
	goRun := func(args ...string) func() (result, error) {
		return func() (result, error) { return sample(exec.Command(args[0], args[1:]...), pb.env, pb.ws) }
	}
	vs := []variant{{&s.landlock, cordonRun(pb.cordon, "landlock")}, {&s.native, cordonRun(pb.cordon, "native")}, {&s.rawBwrap, pb.rawBwrap},
		{&s.go1, goRun(pb.goLauncher, "/bin/true")}, {&s.go2, goRun(pb.goLauncher, pb.goLauncher, "/bin/true")}}
	if pb.before != "" {
		vs = append(vs, variant{&s.landlock0, cordonRun(pb.before, "landlock")}, variant{&s.native0, cordonRun(pb.before, "native")})
	}
	if pb.landstrip != "" {
		vs = append(vs, variant{&s.landstrip, func() (result, error) {
			return sample(exec.Command(pb.landstrip, "run", "-p", pb.lsPol, "--", "/bin/true"), pb.env, pb.ws)
		}})
	}
	fmt.Printf("\n== peers%s: %d rounds, order rotated each round; workspace %s\n", what, pb.cfg.peers, pb.ws)
	for _, v := range vs {
		if _, err := v.run(); err != nil {
			return s, err
		}
	}
	for i := range pb.cfg.peers {
		for j := range vs {
			v := vs[(i+j)%len(vs)]
			r, err := v.run()
			if err != nil {
				return s, fmt.Errorf("round %d: %w", i, err)
			}
			v.s.add(r)
		}
	}
	return s, nil
}

func (pb *peerBench) rawBwrap() (result, error) {
	made, err := makeStubs(pb.stubs)
	if err != nil {
		return result{}, err
	}
	defer removeStubs(made)
	cmd, err := rawCmd(pb.raw, pb.filter)
	if err != nil {
		return result{}, err
	}
	return sample(cmd, pb.env, pb.ws)
}

func (pb *peerBench) report(title string, s peerSeries) {
	fmt.Printf("\n%s:\n%-44s %6s %9s %9s %9s %12s\n", title, "", "n", "median", "p95", "min", "cpu median")
	row := func(s series, name string) {
		fmt.Printf("%-44s %6d %9s %9s %9s %12s\n", name, len(s.res), ms(s.median()), ms(s.p95()), ms(s.pct(0)), ms(s.cpuMedian()))
	}
	row(s.landlock, "(ak) cordon run --backend landlock")
	if pb.landstrip != "" {
		row(s.landstrip, "(ls) landstrip "+landstripVersion)
	}
	row(s.native, "(an) cordon run --backend native")
	row(s.rawBwrap, "(b) raw bwrap, the same mounts")
	row(s.go1, "(g1) minimal Go launcher → /bin/true")
	row(s.go2, "(g2) (g1) → (g1) → /bin/true")
	if pb.before != "" {
		row(s.landlock0, "(ak0) (ak) through -before")
		row(s.native0, "(an0) (an) through -before")
		fmt.Printf("after − before, paired medians: (ak) − (ak0) %s, (an) − (an0) %s (%.2f and %.2f as ratios of medians)\n",
			ms(pairedMedian(s.landlock, s.landlock0)), ms(pairedMedian(s.native, s.native0)),
			ratio(s.landlock.median(), s.landlock0.median()), ratio(s.native.median(), s.native0.median()))
	}
	if pb.landstrip != "" {
		fmt.Printf("(g2) / (ls): %.2f median: the floor of (ak) / (ls) for a launch of two Go starts\n", ratio(s.go2.median(), s.landstrip.median()))
	}
	if pb.landstrip != "" {
		fmt.Printf("(ak) / (ls): %.2f median, %.2f min, %.2f cpu (target ≤ 1.5); paired difference %s\n",
			ratio(s.landlock.median(), s.landstrip.median()), ratio(s.landlock.pct(0), s.landstrip.pct(0)),
			ratio(s.landlock.cpuMedian(), s.landstrip.cpuMedian()), ms(pairedMedian(s.landlock, s.landstrip)))
	}
	fmt.Printf("(an) / (b): %.2f median, %.2f min, %.2f cpu (target ≤ 1.3); paired difference %s\n",
		ratio(s.native.median(), s.rawBwrap.median()), ratio(s.native.pct(0), s.rawBwrap.pct(0)),
		ratio(s.native.cpuMedian(), s.rawBwrap.cpuMedian()), ms(pairedMedian(s.native, s.rawBwrap)))
}

// growth is what each variant's median grew by with the host's extra
// processes, and cordon's growth beyond the peer beside it (target: at
// most 1 ms).
func (pb *peerBench) growth(base, crowd peerSeries) {
	g := func(a, b series) float64 { return float64(b.median()-a.median()) / 1e6 }
	defer pb.cpuGrowth(base, crowd)
	ak, an, b := g(base.landlock, crowd.landlock), g(base.native, crowd.native), g(base.rawBwrap, crowd.rawBwrap)
	fmt.Printf("\ngrowth with %d more host processes (medians): (ak) %+.2fms, (an) %+.2fms, (b) %+.2fms", pb.cfg.hosts, ak, an, b)
	if pb.landstrip != "" {
		ls := g(base.landstrip, crowd.landstrip)
		fmt.Printf(", (ls) %+.2fms\n(ak) beyond (ls): %+.2fms", ls, ak-ls)
	}
	fmt.Printf("\n(an) beyond (b): %+.2fms (target ≤ 1 ms each)\n", an-b)
}

// sleepers starts n processes that sleep until stop kills them.
func sleepers(n int) (stop func(), err error) {
	var ps []*exec.Cmd
	stop = func() {
		for _, p := range ps {
			p.Process.Kill()
		}
		for _, p := range ps {
			p.Wait()
		}
	}
	for range n {
		p := exec.Command("/bin/sleep", "3600")
		p.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := p.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("sleeper %d of %d: %w", len(ps)+1, n, err)
		}
		ps = append(ps, p)
	}
	fmt.Printf("\n%d sleepers started\n", n)
	return stop, nil
}

// findLandstrip is -landstrip, else $LANDSTRIP, else the binary
// -install-landstrip puts in the benchmark's own directory; with
// -install-landstrip it installs the pinned version there first (npm).
// Nothing of it is ever committed.
func findLandstrip(cfg config) string {
	if cfg.landstrip != "" {
		return cfg.landstrip
	}
	if p := os.Getenv("LANDSTRIP"); p != "" {
		return p
	}
	dir := landstripDir()
	bin := filepath.Join(dir, "node_modules", "@landstrip", "landstrip-linux-x64", "bin", "landstrip")
	if cfg.installLandstrip {
		if _, err := os.Stat(bin); err != nil {
			npm := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "@landstrip/landstrip-linux-x64@"+landstripVersion)
			if out, err := npm.CombinedOutput(); err != nil {
				fmt.Printf("landstrip: npm install into %s failed: %v: %s\n", dir, err, clipTo(string(out), 400))
				return ""
			}
		}
	}
	if _, err := os.Stat(bin); err != nil {
		fmt.Printf("landstrip: not found (-landstrip PATH, $LANDSTRIP, or -install-landstrip into %s): (ls) left out\n", dir)
		return ""
	}
	if v, err := exec.Command(bin, "--version").Output(); err != nil || !strings.Contains(string(v), landstripVersion) {
		fmt.Printf("landstrip: %s is not %s (%q): the row is not the pinned peer\n", bin, landstripVersion, strings.TrimSpace(string(v)))
	}
	return bin
}

// landstripDir is the benchmark's own directory for landstrip, in the
// user's cache, outside every checkout.
func landstripDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "cordon-bench", "landstrip-"+landstripVersion)
}

// cpuGrowth is growth's figures in CPU time, which the machine's other
// load moves much less than the wall clock.
func (pb *peerBench) cpuGrowth(base, crowd peerSeries) {
	g := func(a, b series) float64 { return float64(b.cpuMedian()-a.cpuMedian()) / 1e6 }
	ak, an, b := g(base.landlock, crowd.landlock), g(base.native, crowd.native), g(base.rawBwrap, crowd.rawBwrap)
	fmt.Printf("the same in CPU time: (ak) %+.2fms, (an) %+.2fms, (b) %+.2fms", ak, an, b)
	if pb.landstrip != "" {
		ls := g(base.landstrip, crowd.landstrip)
		fmt.Printf(", (ls) %+.2fms; (ak) beyond (ls) %+.2fms", ls, ak-ls)
	}
	fmt.Printf("; (an) beyond (b) %+.2fms\n", an-b)
}
