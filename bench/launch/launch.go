//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/launcher"
)

// launchBench is the launch comparison, the variants (a) to (p) of the
// package doc: the fixtures they launch, built once, and their series.
type launchBench struct {
	cfg      config
	cordon   string // the binary under test
	env      []string
	ws       string // the workspace of (a), (an), (b), (e) and (p)
	probeLog string // CORDON_PROBE_LOG: one line per detection probe

	// cordon run's arguments for (a), (an) and (p).
	runArgs, nativeArgs, allowlistArgs, allowlistBwrapArgs []string

	// Raw bwrap with the argv cordon renders for ws: its seccomp filter
	// (passed on fd 3), the argv, the same argv through the minimal Go
	// launcher, and the mount stubs it needs, made before each launch and
	// removed after it, outside the timing.
	filter *os.File
	prof   *launcher.Rendered
	raw    []string
	viaGo  []string
	stubs  []string

	// (c) and (a0) make and remove their stubs every time, each in a
	// workspace of its own, where no lingering stub of another variant can
	// stand in.
	stubbingWS, noLingerWS    string
	stubbingRaw, stubbing     []string // (c)'s argv and stubs
	noLingerArgs, noLingerEnv []string

	srt, srtSettings string // empty srt: not found, (d) skipped
	codex            string // Codex's CLI; empty: not found, (dx) skipped

	// (en): the minimal Go launcher of the native sandbox and its spec.
	floorArgs []string
	// (ak): cordon run --backend landlock, when this cordon has it.
	landlockArgs []string

	cold                   result // the first launch, on an empty detection cache
	coldProbes, warmProbes int

	launches    launchSeries
	oneWall     string // cordon built with the native init of one wall (al)
	nativeFloor string // the minimal Go launcher of the native sandbox (en)
	walls       []*wallVariant
}

// launchSeries holds one series per variant; the letters are the labels
// the report prints and BENCHMARKS.md uses.
type launchSeries struct {
	cordon         series // (a) cordon run --workspace W -- /bin/true
	cordonNoLinger series // (a0) (a) with CORDON_STUB_LINGER=0
	native         series // (an) (a) with --backend native
	nativeOneWall  series // (al) (an) without Landlock and its own root
	rawBwrap       series // (b) raw bwrap, stubs made beforehand: the floor
	rawBwrapStubs  series // (c) raw bwrap making and removing its stubs
	srt            series // (d) Anthropic's srt
	codex          series // (dx) Codex's sandbox
	nativeFloor    series // (en) the minimal Go launcher → the same native sandbox
	landlock       series // (ak) (a) with --backend landlock
	goLauncher     series // (e) (b) started by the minimal Go launcher
	allowlist      series // (p) (a) with --allow-domain example.com
	allowlistBwrap series // (pb) (p) with --backend bwrap
	rssFloor       series // /bin/true under /usr/bin/time: the RSS floor
}

func newLaunchBench(cfg config, cordon string, env []string, ws, probeLog string) *launchBench {
	// The stubs of ws stay for the whole run: cordon's reaper would
	// otherwise remove them (a second after the last launch of cordon)
	// while a raw bwrap variant, which expects them, is starting.
	env = append(slices.Clip(env), "CORDON_STUB_LINGER=10m")
	lb := &launchBench{cfg: cfg, cordon: cordon, env: env, ws: ws, probeLog: probeLog}
	// (a) is bwrap's launch, named: it is compared with raw bwrap; auto
	// takes the native backend where it is usable, which is (an).
	lb.runArgs = []string{"run", "--backend", "bwrap", "--workspace", ws, "--", "/bin/true"}
	lb.nativeArgs = []string{"run", "--backend", "native", "--workspace", ws, "--", "/bin/true"}
	// (p) is (an) with a network allowlist: cordon stays to run the proxy,
	// and the native init makes the listener; (pb) is (a) with it, where a
	// helper inside the sandbox makes it.
	lb.allowlistArgs = []string{"run", "--backend", "native", "--workspace", ws, "--allow-domain", "example.com", "--", "/bin/true"}
	lb.allowlistBwrapArgs = []string{"run", "--backend", "bwrap", "--workspace", ws, "--allow-domain", "example.com", "--", "/bin/true"}
	return lb
}

func (lb *launchBench) close() {
	if lb.filter != nil {
		lb.filter.Close()
	}
}

// coldLaunch times the first launch and counts its probes. It comes
// first, before anything else could fill the fresh detection cache.
func (lb *launchBench) coldLaunch() error {
	cold, err := sample(exec.Command(lb.cordon, lb.runArgs...), lb.env, lb.ws)
	if err != nil {
		return fmt.Errorf("cold cordon run: %w", err)
	}
	lb.cold, lb.coldProbes = cold, countLines(lb.probeLog)
	return nil
}

// prepare builds the fixtures, proves raw bwrap is the same sandbox as
// cordon run, and looks for srt.
func (lb *launchBench) prepare(tmp, golauncher string) error {
	if err := lb.prepareRaw(tmp, golauncher); err != nil {
		return err
	}
	if err := lb.prepareOwnWorkspaces(tmp); err != nil {
		return err
	}
	if err := checkSameMounts(lb.cordon, lb.prof, lb.filter, lb.stubs, lb.env, lb.ws); err != nil {
		return err
	}
	if err := lb.prepareNativeFloor(tmp); err != nil {
		return fmt.Errorf("native floor: %w", err)
	}
	lb.prepareLandlock()
	lb.prepareSrt(tmp)
	lb.prepareCodex()
	return nil
}

// prepareRaw renders cordon's argv for ws into the raw bwrap command, run
// directly and through the minimal Go launcher.
func (lb *launchBench) prepareRaw(tmp, golauncher string) error {
	prof, err := profile(lb.cordon, lb.env, lb.ws, "--backend", "bwrap", "--workspace", lb.ws, "--", "/bin/true")
	if err != nil {
		return err
	}
	filter, err := seccompFile(tmp)
	if err != nil {
		return err
	}
	lb.prof, lb.filter = prof, filter
	lb.raw = rawArgv(prof, 3, "/bin/true")
	lb.viaGo = append([]string{golauncher}, lb.raw...)
	return nil
}

// prepareOwnWorkspaces makes the workspaces of (c) and (a0), and (c)'s
// argv, stubs and masks.
func (lb *launchBench) prepareOwnWorkspaces(tmp string) error {
	lb.stubbingWS, lb.noLingerWS = filepath.Join(tmp, "ws-c"), filepath.Join(tmp, "ws-a0")
	for _, w := range []string{lb.stubbingWS, lb.noLingerWS} {
		if err := makeWorkspace(w); err != nil {
			return fmt.Errorf("workspace fixture: %w", err)
		}
	}
	if err := lb.listStubs(); err != nil {
		return err
	}
	if err := lb.makeMasks(); err != nil {
		return err
	}
	lb.noLingerArgs = []string{"run", "--backend", "bwrap", "--workspace", lb.noLingerWS, "--", "/bin/true"}
	lb.noLingerEnv = append(slices.Clip(lb.env), "CORDON_STUB_LINGER=0")
	return nil
}

// listStubs takes the stubs from ws-c's profile: ws's stubs linger from
// the cold launch, so its profile lists none; they are ws-c's, moved
// over. ws-c's private TMPDIR is made once, as cordon makes it.
func (lb *launchBench) listStubs() error {
	prof, err := profile(lb.cordon, lb.env, lb.stubbingWS, "--backend", "bwrap", "--workspace", lb.stubbingWS, "--", "/bin/true")
	if err != nil {
		return err
	}
	lb.stubbingRaw = rawArgv(prof, 3, "/bin/true")
	for _, p := range prof.Made {
		rel, err := filepath.Rel(lb.stubbingWS, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
			continue
		}
		lb.stubbing = append(lb.stubbing, p)
		lb.stubs = append(lb.stubs, filepath.Join(lb.ws, rel))
	}
	return nil
}

// makeMasks has one cordon launch in ws-c build the mask directories its
// raw argv names (the state directory's mask, with the mount point of
// ws-c's TMPDIR); its stubs go with it, and (c) waits until they are gone.
func (lb *launchBench) makeMasks() error {
	mk := exec.Command(lb.cordon, "run", "--backend", "bwrap", "--workspace", lb.stubbingWS, "--", "/bin/true")
	mk.Env = append(slices.Clip(lb.env), "CORDON_STUB_LINGER=0")
	if out, err := mk.CombinedOutput(); err != nil {
		return fmt.Errorf("masks for ws-c: %v: %s", err, out)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if len(missing(lb.stubbing)) == len(lb.stubbing) {
			break
		}
	}
	return nil
}

// prepareSrt finds srt (-srt, $SRT, PATH, or -install-srt) and writes its
// settings.
func (lb *launchBench) prepareSrt(tmp string) {
	lb.srt = findSrt(lb.cfg, tmp)
	lb.srtSettings = filepath.Join(tmp, "srt-settings.json")
	if lb.srt == "" {
		return
	}
	// The closest srt equivalent of the workspace preset: cwd writable,
	// no network, ~/.ssh unreadable.
	os.WriteFile(lb.srtSettings, []byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`), 0o600)
	if _, err := sample(exec.Command(lb.srt, "--settings", lb.srtSettings, "/bin/true"), lb.env, lb.ws); err != nil {
		fmt.Printf("srt: %s does not run here: %v\n", lb.srt, err)
		lb.srt = ""
		return
	}
	v, _ := exec.Command(lb.srt, "--version").Output()
	fmt.Printf("srt: %s (%s)\n", strings.TrimSpace(string(v)), lb.srt)
}

// compare runs the rounds, counting the probes of the warm launches, and
// reports.
func (lb *launchBench) compare() error {
	fmt.Printf("\n== launch: %d rounds, order rotated each round; workspace %s\n", lb.cfg.n, lb.ws)
	fmt.Printf("mount points a launch makes for writable roots that do not exist yet: %d (they stay)\n", len(lb.stubs))
	if _, err := sample(exec.Command(lb.cordon, lb.nativeArgs...), lb.env, lb.ws); err != nil {
		return fmt.Errorf("cold native launch: %w", err)
	}
	// (al)'s build probes once, into its own state directory (envFor).
	if _, err := sample(exec.Command(lb.oneWall, lb.nativeArgs...), lb.envFor(lb.oneWall), lb.ws); err != nil {
		return fmt.Errorf("cold native launch of one wall: %w", err)
	}
	probesBefore := countLines(lb.probeLog)
	for i := range lb.cfg.n {
		if err := lb.round(i); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
	}
	lb.warmProbes = countLines(lb.probeLog) - probesBefore
	lb.report()
	return nil
}

// round times every variant once, starting with the i-th so that none
// always follows the same one, and in the first -rss-n rounds measures
// their peak RSS too.
func (lb *launchBench) round(i int) error {
	steps := []func() error{
		lb.timeCordon, lb.timeNative, lb.timeRawBwrap, lb.timeCordonNoLinger,
		lb.timeRawBwrapStubs, lb.timeGoLauncher, lb.timeAllowlist, lb.timeAllowlistBwrap,
		lb.timeNativeOneWall,
	}
	if lb.floorArgs != nil {
		steps = append(steps, lb.timeNativeFloor)
	}
	if lb.landlockArgs != nil {
		steps = append(steps, lb.timeLandlock)
	}
	withSrt := lb.srt != "" && i < lb.cfg.srtN
	if withSrt {
		steps = append(steps, lb.timeSrt)
	}
	if lb.codex != "" && i < lb.cfg.codexN {
		steps = append(steps, lb.timeCodex)
	}
	for j := range steps {
		if err := steps[(i+j)%len(steps)](); err != nil {
			return err
		}
	}
	if i < lb.cfg.rssN {
		if err := lb.measureRSS(withSrt); err != nil {
			return fmt.Errorf("rss: %w", err)
		}
	}
	return nil
}

// timeRun times cordon with args into s.
func (lb *launchBench) timeRun(s *series, args, env []string, dir string) error {
	r, err := sample(exec.Command(lb.cordon, args...), env, dir)
	s.add(r)
	return err
}

func (lb *launchBench) timeCordon() error {
	return lb.timeRun(&lb.launches.cordon, lb.runArgs, lb.env, lb.ws)
}

func (lb *launchBench) timeNative() error {
	return lb.timeRun(&lb.launches.native, lb.nativeArgs, lb.env, lb.ws)
}

// envFor is the environment of launches through bin: a build other than
// the one under test gets a state directory of its own. detect caches
// its probe keyed by the binary that made it, so two builds sharing one
// cache would each find the other's entry and probe again on every
// launch: an extra sandbox per launch, 20 ms or more, on both sides.
func (lb *launchBench) envFor(bin string) []string {
	if bin == lb.cordon {
		return lb.env
	}
	dir := filepath.Join(filepath.Dir(bin), "state-"+filepath.Base(bin), "cordon")
	return append(slices.Clip(lb.env), state.EnvDir+"="+dir)
}

func (lb *launchBench) timeNativeOneWall() error {
	r, err := sample(exec.Command(lb.oneWall, lb.nativeArgs...), lb.envFor(lb.oneWall), lb.ws)
	lb.launches.nativeOneWall.add(r)
	return err
}

func (lb *launchBench) timeCordonNoLinger() error {
	return lb.timeRun(&lb.launches.cordonNoLinger, lb.noLingerArgs, lb.noLingerEnv, lb.noLingerWS)
}

func (lb *launchBench) timeAllowlist() error {
	return lb.timeRun(&lb.launches.allowlist, lb.allowlistArgs, lb.env, lb.ws)
}

func (lb *launchBench) timeAllowlistBwrap() error {
	return lb.timeRun(&lb.launches.allowlistBwrap, lb.allowlistBwrapArgs, lb.env, lb.ws)
}

func (lb *launchBench) timeSrt() error {
	r, err := sample(exec.Command(lb.srt, "--settings", lb.srtSettings, "/bin/true"), lb.env, lb.ws)
	lb.launches.srt.add(r)
	return err
}

func (lb *launchBench) timeCodex() error {
	r, err := sample(exec.Command(lb.codex, codexArgs...), lb.env, lb.ws)
	lb.launches.codex.add(r)
	return err
}

func (lb *launchBench) timeNativeFloor() error {
	r, err := sample(exec.Command(lb.floorArgs[0], lb.floorArgs[1:]...), lb.env, lb.ws)
	lb.launches.nativeFloor.add(r)
	return err
}

func (lb *launchBench) timeLandlock() error {
	return lb.timeRun(&lb.launches.landlock, lb.landlockArgs, lb.env, lb.ws)
}

func (lb *launchBench) timeRawBwrap() error {
	return lb.timePreStubbed(&lb.launches.rawBwrap, lb.raw)
}

func (lb *launchBench) timeGoLauncher() error {
	return lb.timePreStubbed(&lb.launches.goLauncher, lb.viaGo)
}

// timePreStubbed times argv: (b), and (e) through the Go launcher.
func (lb *launchBench) timePreStubbed(s *series, argv []string) error {
	return lb.preStubbed(argv, func(cmd *exec.Cmd) error {
		r, err := sample(cmd, lb.env, lb.ws)
		s.add(r)
		return err
	})
}

// preStubbed runs f on argv as rawCmd starts it, the stubs made before
// and removed after, outside f.
func (lb *launchBench) preStubbed(argv []string, f func(*exec.Cmd) error) error {
	made, err := makeStubs(lb.stubs)
	if err != nil {
		return err
	}
	defer removeStubs(made)
	cmd, err := rawCmd(argv, lb.filter)
	if err != nil {
		return err
	}
	return f(cmd)
}

// timeRawBwrapStubs is (c): raw bwrap in ws-c, its stubs made and removed
// inside the timing.
func (lb *launchBench) timeRawBwrapStubs() error {
	cmd, err := rawCmd(lb.stubbingRaw, lb.filter)
	if err != nil {
		return err
	}
	start := time.Now()
	made, err := makeStubs(lb.stubbing)
	if err != nil {
		return err
	}
	r, err := sample(cmd, lb.env, lb.stubbingWS)
	removeStubs(made)
	r.wall = time.Since(start)
	lb.launches.rawBwrapStubs.add(r)
	return err
}

// measureRSS adds one peak RSS to (a), the /bin/true floor, (b), (d)
// when withSrt, (e) and (p).
func (lb *launchBench) measureRSS(withSrt bool) error {
	l := &lb.launches
	if err := lb.rss(&l.cordon, exec.Command(lb.cordon, lb.runArgs...)); err != nil {
		return err
	}
	if err := lb.rss(&l.rssFloor, exec.Command("/bin/true")); err != nil {
		return err
	}
	if err := lb.rssPreStubbed(&l.rawBwrap, lb.raw); err != nil {
		return err
	}
	if withSrt {
		if err := lb.rss(&l.srt, exec.Command(lb.srt, "--settings", lb.srtSettings, "/bin/true")); err != nil {
			return err
		}
	}
	if err := lb.rssPreStubbed(&l.goLauncher, lb.viaGo); err != nil {
		return err
	}
	return lb.rss(&l.allowlist, exec.Command(lb.cordon, lb.allowlistArgs...))
}

func (lb *launchBench) rss(s *series, cmd *exec.Cmd) error {
	kib, err := measureRSS(cmd, lb.env, lb.ws)
	s.addRSS(kib)
	return err
}

// rssPreStubbed is timePreStubbed's peak RSS.
func (lb *launchBench) rssPreStubbed(s *series, argv []string) error {
	return lb.preStubbed(argv, func(cmd *exec.Cmd) error { return lb.rss(s, cmd) })
}

// report prints the series, the ratios against the targets
// (BENCHMARKS.md) and the probe counts.
func (lb *launchBench) report() {
	l := &lb.launches
	fmt.Printf("\n%-44s %6s %9s %9s %9s %12s\n", "", "n", "median", "p95", "min", "peak RSS")
	l.cordon.print("(a) cordon run --backend bwrap --workspace W -- /bin/true")
	l.cordonNoLinger.print("(a0) the same, CORDON_STUB_LINGER=0")
	l.native.print("(an) the same as (a), --backend native")
	l.nativeOneWall.print("(al) (an) with the init of one wall")
	l.rawBwrap.print("(b) raw bwrap, same argv, stubs pre-made")
	l.rawBwrapStubs.print("(c) raw bwrap + mkdir/rmdir the same stubs")
	l.goLauncher.print("(e) minimal Go launcher → same raw bwrap")
	l.allowlist.print("(p) (an) with --allow-domain example.com")
	l.allowlistBwrap.print("(pb) (a) with --allow-domain example.com")
	l.nativeFloor.print("(en) minimal Go launcher → same native sandbox")
	if lb.landlockArgs != nil {
		l.landlock.print("(ak) (a) with --backend landlock")
	} else {
		fmt.Println("(ak) --backend landlock: skipped (this cordon has no such backend)")
	}
	if lb.srt != "" {
		l.srt.print("(d) srt --settings S /bin/true")
	} else {
		fmt.Println("(d) srt: skipped (not found; -srt PATH, $SRT, or -install-srt)")
	}
	if lb.codex != "" {
		l.codex.print("(dx) codex sandbox (workspace-write) /bin/true")
	} else {
		fmt.Println("(dx) Codex's sandbox: skipped (not found; -codex PATH or $CODEX)")
	}
	fmt.Printf("\nratio median cordon/(b) = %.2f   cordon/(c) = %.2f   (target ≤ 1.25)\n",
		ratio(l.cordon.median(), l.rawBwrap.median()), ratio(l.cordon.median(), l.rawBwrapStubs.median()))
	fmt.Printf("ratio median (a0)/(b) = %.2f   (a0)/(c) = %.2f   (stubs made and removed every launch)\n",
		ratio(l.cordonNoLinger.median(), l.rawBwrap.median()), ratio(l.cordonNoLinger.median(), l.rawBwrapStubs.median()))
	fmt.Printf("ratio p95    cordon/(b) = %.2f   cordon/(c) = %.2f\n",
		ratio(l.cordon.p95(), l.rawBwrap.p95()), ratio(l.cordon.p95(), l.rawBwrapStubs.p95()))
	if lb.srt != "" {
		fmt.Printf("ratio median srt/cordon = %.1f\n", ratio(l.srt.median(), l.cordon.median()))
	}
	fmt.Printf("ratio median (e)/(b) = %.2f  (the floor any Go launcher pays: exec + Go runtime start)   cordon/(e) = %.2f\n",
		ratio(l.goLauncher.median(), l.rawBwrap.median()), ratio(l.cordon.median(), l.goLauncher.median()))
	fmt.Printf("ratio median (an)/(e) = %.2f  (native: cordon's own init in place of bwrap, two Go starts and a CLONE_NEWUSER fork; guard ≤ 2.4)   (an)/(a) = %.2f\n",
		ratio(l.native.median(), l.goLauncher.median()), ratio(l.native.median(), l.cordon.median()))
	fmt.Printf("cordon's own work per launch: bwrap (a)-(e) median = %s, min = %s; native (an)-(en) median = %s, min = %s\n",
		ms(l.cordon.median()-l.goLauncher.median()), ms(l.cordon.pct(0)-l.goLauncher.pct(0)),
		ms(l.native.median()-l.nativeFloor.median()), ms(l.native.pct(0)-l.nativeFloor.pct(0)))
	if lb.landlockArgs != nil {
		fmt.Printf("landlock backend: (ak)-(e) median = %s (its own work over the minimal Go launcher, which execs bwrap: not the same sandbox)\n",
			ms(l.landlock.median()-l.goLauncher.median()))
	}
	if lb.srt != "" || lb.codex != "" {
		fmt.Printf("peers, median: srt %s, Codex's sandbox %s; cordon (a) %s, (an) %s\n",
			ms(l.srt.median()), ms(l.codex.median()), ms(l.cordon.median()), ms(l.native.median()))
	}
	fmt.Printf("cordon peak RSS: median %.1f MiB, max %.1f MiB over %d runs (target ≤ 20 MiB; /usr/bin/time -f %%M, whose floor, /bin/true, is %.1f MiB)\n",
		l.cordon.rssMedian(), l.cordon.rssMax(), l.cordon.rssCount(), l.rssFloor.rssMax())
	fmt.Printf("network allowlist: (p)-(an) median = %s, p95 = %s (target ≤ 5 ms: native, the backend auto takes); (pb)-(a) median = %s (bwrap); (p)-(a) median = %s (native with the allowlist against bwrap without); (p) peak RSS %.1f MiB, the largest of cordon and the sandbox's init\n",
		ms(l.allowlist.median()-l.native.median()), ms(l.allowlist.p95()-l.native.p95()),
		ms(l.allowlistBwrap.median()-l.cordon.median()), ms(l.allowlist.median()-l.cordon.median()), l.allowlist.rssMax())
	lb.printWalls()
	fmt.Printf("cold launch: %s wall, %d probe(s) (target ≤ 1)\n", ms(lb.cold.wall), lb.coldProbes)
	fmt.Printf("warm launches: %d probe(s) in %d launches (target 0)\n", lb.warmProbes, lb.cfg.n)
}
