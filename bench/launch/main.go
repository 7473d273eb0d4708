//go:build linux

// Command launch is cordon's launch benchmark (BENCHMARKS.md).
//
// In one run it builds cordon (CGO_ENABLED=0), makes a workspace fixture
// (a git repository with a few files) and alternates, N times:
//
//	(a) cordon run --workspace W -- /bin/true
//	(b) the raw bwrap command with the same argv ('cordon profile --json'),
//	    mount stubs created beforehand, outside the timing: the floor
//	(c) the same raw bwrap command with the same stub directories created
//	    before it and removed after it, inside the timing: like for like
//	(d) Anthropic's srt, when installed, for the first -srt-n rounds
//	(e) the same raw bwrap command as (b), started through a minimal Go
//	    launcher (syscall.Exec of its arguments, built CGO_ENABLED=0): the
//	    floor any Go launcher pays, exec plus Go runtime start
//	(p) (a) with a network allowlist (--allow-domain example.com): cordon
//	    stays to run the proxy, and a helper inside hands it the listener
//
// With -net (the default) it then downloads -net-mib MiB over HTTP from a
// server on the host's loopback with curl, straight from the host and
// through the proxy from inside a sandbox, and samples the peak RSS of the
// cordon process running the proxy.
//
// and (an), (a) through --backend native. Then the large-workspace cases
// (large.go): workspaces with 300 and 1,000 nested repositories and
// policies of 100 to 4,000 roots, each launched through bwrap and through
// the native backend, alternated.
//
// Each sample is the wall time of exec.Cmd Start+Wait in this process (no
// shell in between); peak RSS is wait4's ru_maxrss. A fresh cordon state
// directory (CORDON_STATE_DIR) and CORDON_PROBE_LOG count detection probes: the cold first launch and
// every warm launch after it. Then a policy of 2,000 nested roots is
// canonicalized, rendered and launched, through cordon and through raw
// bwrap --args FD with the same arguments.
//
//	go run ./bench/launch               # or bench/launch.sh
//	go run ./bench/launch -n 500 -srt-n 0
//	go run ./bench/launch -inproc 300 -cpuprofile /tmp/launch.pprof
//	go run ./bench/launch -large-only -large-n 10
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/bwrap"
	scalepol "github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/policy"
)

type config struct {
	n          int
	srtN       int
	srt        string
	installSrt bool
	scale      bool
	scaleN     int
	rssN       int
	inproc     int
	cpuprofile string
	keep       bool
	dir        string
	// large workspaces (large.go)
	largeOnly bool
	largeN    int
	repos     []int
	growth    []int
	net       bool
	netMiB    int
	netN      int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 200, "alternation rounds of (a), (b), (c), (e)")
	flag.IntVar(&cfg.srtN, "srt-n", 20, "rounds that also run srt (it takes ~0.5 s or more each); 0 skips it")
	flag.StringVar(&cfg.srt, "srt", "", "path of Anthropic's srt (default: $SRT, else srt in PATH)")
	flag.BoolVar(&cfg.installSrt, "install-srt", false, "npm install @anthropic-ai/sandbox-runtime into the temp dir when srt is not found")
	flag.BoolVar(&cfg.scale, "scale", true, "also canonicalize, render and launch a policy of 2,000 nested roots")
	flag.IntVar(&cfg.scaleN, "scale-n", 10, "launches of the 2,000-root policy (alternated with raw bwrap)")
	flag.IntVar(&cfg.rssN, "rss-n", 20, "rounds that also measure peak RSS under /usr/bin/time -f %M (untimed)")
	flag.IntVar(&cfg.inproc, "inproc", 0, "instead: run N launches in this process through the launcher package (for -cpuprofile)")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "with -inproc: write a CPU profile of the in-process launches to `FILE`")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temp dir")
	flag.BoolVar(&cfg.net, "net", true, "also measure the network allowlist's proxy: throughput of a large download through it against one straight from the host, and cordon's memory meanwhile")
	flag.IntVar(&cfg.netMiB, "net-mib", 512, "size of the -net download in MiB")
	flag.IntVar(&cfg.netN, "net-n", 5, "rounds of the -net download (alternated with the direct one)")
	flag.StringVar(&cfg.dir, "dir", "", "parent of the temp dir (default $TMPDIR); the workspace lives there, so its disk is the one measured")
	flag.BoolVar(&cfg.largeOnly, "large-only", false, "run only the large-workspace cases")
	flag.IntVar(&cfg.largeN, "large-n", 10, "rounds of each large-workspace case and backend (0 skips them)")
	repos := flag.String("repos", "300,1000", "large workspaces: nested repository counts")
	growth := flag.String("growth", "100,500,1000,2000,4000", "large workspaces: policy root counts")
	flag.Parse()
	cfg.repos, cfg.growth = ints(*repos), ints(*growth)
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	os.Unsetenv("CORDON_SANDBOX") // measure the real thing, never a nested pass-through
	tmp, err := os.MkdirTemp(cfg.dir, "cordon-bench-")
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Println("temp dir kept:", tmp)
	}
	ws := filepath.Join(tmp, "ws")
	if err := makeWorkspace(ws); err != nil {
		return fmt.Errorf("workspace fixture: %w", err)
	}
	if cfg.inproc > 0 {
		return inProcess(cfg, tmp, ws)
	}

	cordon := filepath.Join(tmp, "cordon")
	if err := buildCordon(cordon); err != nil {
		return err
	}
	golauncher := filepath.Join(tmp, "golauncher")
	if err := buildGoLauncher(filepath.Join(tmp, "golauncher-src"), golauncher); err != nil {
		return err
	}
	probeLog := filepath.Join(tmp, "probes.log")
	env := append(os.Environ(), state.EnvDir+"="+filepath.Join(tmp, "state", "cordon"), "CORDON_PROBE_LOG="+probeLog)
	printMachine(ws)
	if cfg.largeOnly {
		return large(cfg, tmp, cordon, env)
	}

	runArgs := []string{"run", "--workspace", ws, "--", "/bin/true"}
	// (p) is (a) with a network allowlist: cordon stays to run the proxy
	// and a helper inside hands it the listener.
	runArgsP := []string{"run", "--workspace", ws, "--allow-domain", "example.com", "--", "/bin/true"}
	// The cold launch comes first, before anything else could fill the
	// fresh detection cache.
	cold, err := sample(exec.Command(cordon, runArgs...), env, ws)
	if err != nil {
		return fmt.Errorf("cold cordon run: %w", err)
	}
	coldProbes := countLines(probeLog)

	prof, err := profile(cordon, env, ws, "--workspace", ws, "--", "/bin/true")
	if err != nil {
		return err
	}
	filter, err := seccompFile(tmp)
	if err != nil {
		return err
	}
	defer filter.Close()
	raw := rawArgv(prof, 3, "/bin/true")
	viaGo := append([]string{golauncher}, raw...)
	// (c) makes and removes its stubs every time, and (a0) has cordon do
	// the same: each in a fixture of its own, where no lingering stub of
	// another variant can stand in.
	wsC, wsZ := filepath.Join(tmp, "ws-c"), filepath.Join(tmp, "ws-a0")
	for _, w := range []string{wsC, wsZ} {
		if err := makeWorkspace(w); err != nil {
			return fmt.Errorf("workspace fixture: %w", err)
		}
	}
	profC, err := profile(cordon, env, wsC, "--workspace", wsC, "--", "/bin/true")
	if err != nil {
		return err
	}
	// ws's stubs linger from the cold launch, so its profile lists none:
	// they are ws-c's, moved over. ws-c's private TMPDIR is made once, as
	// cordon makes it.
	rawC, stubsC, stubs := rawArgv(profC, 3, "/bin/true"), []string(nil), []string(nil)
	for _, p := range profC.Stubs {
		rel, err := filepath.Rel(wsC, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
			continue
		}
		stubsC = append(stubsC, p)
		stubs = append(stubs, filepath.Join(ws, rel))
	}
	// One cordon launch in ws-c builds the mask directories its raw argv
	// names (the state directory's mask, with the mount point of ws-c's
	// TMPDIR); its stubs go with it, and (c) waits until they are gone.
	mk := exec.Command(cordon, "run", "--workspace", wsC, "--", "/bin/true")
	mk.Env = append(slices.Clip(env), "CORDON_STUB_LINGER=0")
	if out, err := mk.CombinedOutput(); err != nil {
		return fmt.Errorf("masks for ws-c: %v: %s", err, out)
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		left := 0
		for _, p := range stubsC {
			if _, err := os.Lstat(p); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
	}
	runArgsZ := []string{"run", "--workspace", wsZ, "--", "/bin/true"}
	envZ := append(slices.Clip(env), "CORDON_STUB_LINGER=0")
	if err := checkSameMounts(cordon, prof, filter, stubs, env, ws); err != nil {
		return err
	}
	srt := findSrt(cfg, tmp)
	srtSettings := filepath.Join(tmp, "srt-settings.json")
	if srt != "" {
		// The closest srt equivalent of the workspace preset: cwd writable,
		// no network, ~/.ssh unreadable.
		os.WriteFile(srtSettings, []byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`), 0o600)
		v, _ := exec.Command(srt, "--version").Output()
		fmt.Printf("srt: %s (%s)\n", strings.TrimSpace(string(v)), srt)
	}

	fmt.Printf("\n== launch: %d rounds, order rotated each round; workspace %s\n", cfg.n, ws)
	fmt.Printf("mount stubs a launch needs: %d (cordon keeps them %s after a launch for the next: (a) reuses them; (a0) and (c) make and remove them every time)\n", len(stubs), launcher.DefaultStubLinger)
	var a, a0, an, b, c, d, e, p, floor series
	runArgsN := append([]string{"run", "--backend", "native"}, runArgs[1:]...)
	if _, err := sample(exec.Command(cordon, runArgsN...), env, ws); err != nil {
		return fmt.Errorf("cold native launch: %w", err)
	}
	probesBefore := countLines(probeLog)
	for i := range cfg.n {
		steps := []func() error{
			func() error {
				s, err := sample(exec.Command(cordon, runArgs...), env, ws)
				a.add(s)
				return err
			},
			func() error {
				s, err := sample(exec.Command(cordon, runArgsN...), env, ws)
				an.add(s)
				return err
			},
			func() error {
				s, err := samplePreStubbed(raw, filter, stubs, env, ws)
				b.add(s)
				return err
			},
			func() error {
				s, err := sample(exec.Command(cordon, runArgsZ...), envZ, wsZ)
				a0.add(s)
				return err
			},
			func() error {
				cmd, err := rawCmd(rawC, filter)
				if err != nil {
					return err
				}
				start := time.Now()
				made, err := makeStubs(stubsC)
				if err != nil {
					return err
				}
				s, err := sample(cmd, env, wsC)
				removeStubs(made)
				s.wall = time.Since(start)
				c.add(s)
				return err
			},
			func() error {
				s, err := samplePreStubbed(viaGo, filter, stubs, env, ws)
				e.add(s)
				return err
			},
			func() error {
				s, err := sample(exec.Command(cordon, runArgsP...), env, ws)
				p.add(s)
				return err
			},
		}
		if srt != "" && i < cfg.srtN {
			steps = append(steps, func() error {
				s, err := sample(exec.Command(srt, "--settings", srtSettings, "/bin/true"), env, ws)
				d.add(s)
				return err
			})
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
		}
		if i < cfg.rssN {
			err := sampleRSS(&a, &b, &d, &floor, cordon, runArgs, raw, filter, stubs, srt, srtSettings, i < cfg.srtN, env, ws)
			if err == nil {
				err = rssPreStubbed(&e, viaGo, filter, stubs, env, ws)
			}
			if err == nil {
				var kib int64
				kib, err = measureRSS(exec.Command(cordon, runArgsP...), env, ws)
				p.addRSS(kib)
			}
			if err != nil {
				return fmt.Errorf("round %d: rss: %w", i, err)
			}
		}
	}
	warmProbes := countLines(probeLog) - probesBefore

	fmt.Printf("\n%-44s %6s %9s %9s %9s %12s\n", "", "n", "median", "p95", "min", "peak RSS")
	a.print("(a) cordon run --workspace W -- /bin/true")
	a0.print("(a0) the same, CORDON_STUB_LINGER=0")
	an.print("(an) the same as (a), --backend native")
	b.print("(b) raw bwrap, same argv, stubs pre-made")
	c.print("(c) raw bwrap + mkdir/rmdir the same stubs")
	e.print("(e) minimal Go launcher → same raw bwrap")
	p.print("(p) (a) with --allow-domain example.com")
	if srt != "" {
		d.print("(d) srt --settings S /bin/true")
	} else {
		fmt.Println("(d) srt: skipped (not found; -srt PATH, $SRT, or -install-srt)")
	}
	fmt.Printf("\nratio median cordon/(b) = %.2f   cordon/(c) = %.2f   (target ≤ 1.25)\n",
		ratio(a.median(), b.median()), ratio(a.median(), c.median()))
	fmt.Printf("ratio median (a0)/(b) = %.2f   (a0)/(c) = %.2f   (stubs made and removed every launch)\n",
		ratio(a0.median(), b.median()), ratio(a0.median(), c.median()))
	fmt.Printf("ratio p95    cordon/(b) = %.2f   cordon/(c) = %.2f\n",
		ratio(a.p95(), b.p95()), ratio(a.p95(), c.p95()))
	if srt != "" {
		fmt.Printf("ratio median srt/cordon = %.1f\n", ratio(d.median(), a.median()))
	}
	fmt.Printf("ratio median (e)/(b) = %.2f  (the floor any Go launcher pays: exec + Go runtime start)   cordon/(e) = %.2f\n",
		ratio(e.median(), b.median()), ratio(a.median(), e.median()))
	fmt.Printf("ratio median (an)/(e) = %.2f  (native: cordon's own init in place of bwrap; target ≤ 1.2)   (an)/(a) = %.2f\n",
		ratio(an.median(), e.median()), ratio(an.median(), a.median()))
	fmt.Printf("cordon peak RSS: median %.1f MiB, max %.1f MiB over %d runs (target ≤ 20 MiB; /usr/bin/time -f %%M, whose floor, /bin/true, is %.1f MiB)\n",
		a.rssMedian(), a.rssMax(), a.rssCount(), floor.rssMax())
	fmt.Printf("network allowlist: (p)-(a) median = %s, p95 = %s (target ≤ 5 ms); (p) peak RSS %.1f MiB, the largest of cordon, bwrap and the helper\n",
		ms(p.median()-a.median()), ms(p.p95()-a.p95()), p.rssMax())
	fmt.Printf("cold launch: %s wall, %d probe(s) (target ≤ 1)\n", ms(cold.wall), coldProbes)
	fmt.Printf("warm launches: %d probe(s) in %d launches (target 0)\n", warmProbes, cfg.n)

	if cfg.net {
		if err := netThroughput(cfg, cordon, env, ws); err != nil {
			return fmt.Errorf("net: %w", err)
		}
	}
	if cfg.largeN > 0 {
		if err := large(cfg, tmp, cordon, env); err != nil {
			return fmt.Errorf("large workspaces: %w", err)
		}
	}
	if cfg.scale {
		if err := scale(cfg, tmp, cordon, filter, env); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		fmt.Printf("probes in the whole run: %d (the cold launch's)\n", countLines(probeLog))
	}
	return nil
}

// sample runs cmd with stdio on /dev/null and returns its wall time and
// peak RSS.
type result struct {
	wall time.Duration
}

// ints parses a comma-separated list of counts.
func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func sample(cmd *exec.Cmd, env []string, dir string) (result, error) {
	var stderr bytes.Buffer
	cmd.Env, cmd.Dir, cmd.Stderr = env, dir, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " ")[:min(200, len(strings.Join(cmd.Args, " ")))], err, stderr.String())
	}
	return result{wall: wall}, nil
}

// samplePreStubbed samples argv as rawCmd starts it, the stubs created
// before and removed after, outside the timing: (b), and (e) through the
// Go launcher.
func samplePreStubbed(argv []string, filter *os.File, stubs, env []string, dir string) (result, error) {
	made, err := makeStubs(stubs)
	if err != nil {
		return result{}, err
	}
	defer removeStubs(made)
	cmd, err := rawCmd(argv, filter)
	if err != nil {
		return result{}, err
	}
	return sample(cmd, env, dir)
}

// rssPreStubbed is samplePreStubbed's peak RSS, under measureRSS.
func rssPreStubbed(s *series, argv []string, filter *os.File, stubs, env []string, dir string) error {
	made, err := makeStubs(stubs)
	if err != nil {
		return err
	}
	defer removeStubs(made)
	cmd, err := rawCmd(argv, filter)
	if err != nil {
		return err
	}
	kib, err := measureRSS(cmd, env, dir)
	s.addRSS(kib)
	return err
}

// measureRSS runs cmd under /usr/bin/time -f %M and returns its peak RSS
// in KiB. Not wait4 on a child of this process: Go starts children with
// vfork, and exec folds the parent's high-water RSS into the child's
// ru_maxrss, so every child would report at least this harness's RSS.
// GNU time forks from a ~1 MiB process; /bin/true shows that floor.
func measureRSS(cmd *exec.Cmd, env []string, dir string) (int64, error) {
	out, err := os.CreateTemp("", "rss-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(out.Name())
	out.Close()
	cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", "-o", out.Name()}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	cmd.Err = nil
	if _, err := sample(cmd, env, dir); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return 0, err
	}
	var kib int64
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &kib); err != nil {
		return 0, fmt.Errorf("time -f %%M: %q: %w", b, err)
	}
	return kib, nil
}

func sampleRSS(a, b, d, floor *series, cordon string, runArgs, raw []string, filter *os.File, stubs []string, srt, srtSettings string, withSrt bool, env []string, ws string) error {
	add := func(s *series, cmd *exec.Cmd) error {
		kib, err := measureRSS(cmd, env, ws)
		s.addRSS(kib)
		return err
	}
	if err := add(a, exec.Command(cordon, runArgs...)); err != nil {
		return err
	}
	if err := add(floor, exec.Command("/bin/true")); err != nil {
		return err
	}
	made, err := makeStubs(stubs)
	if err != nil {
		return err
	}
	cmd, err := rawCmd(raw, filter)
	if err == nil {
		err = add(b, cmd)
	}
	removeStubs(made)
	if err != nil {
		return err
	}
	if srt != "" && withSrt {
		return add(d, exec.Command(srt, "--settings", srtSettings, "/bin/true"))
	}
	return nil
}

type series struct {
	res []result
	rss []int64 // KiB, from measureRSS
}

func (s *series) add(r result)     { s.res = append(s.res, r) }
func (s *series) addRSS(kib int64) { s.rss = append(s.rss, kib) }
func (s series) rssCount() int     { return len(s.rss) }

func (s series) walls() []time.Duration {
	w := make([]time.Duration, len(s.res))
	for i, r := range s.res {
		w[i] = r.wall
	}
	slices.Sort(w)
	return w
}

// pct is the nearest-rank percentile.
func (s series) pct(p float64) time.Duration {
	w := s.walls()
	if len(w) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(w)))) - 1
	return w[max(i, 0)]
}

func (s series) median() time.Duration { return s.pct(50) }
func (s series) p95() time.Duration    { return s.pct(95) }

func (s series) rssMedian() float64 {
	r := slices.Sorted(slices.Values(s.rss))
	if len(r) == 0 {
		return 0
	}
	return float64(r[(len(r)-1)/2]) / 1024
}

func (s series) rssMax() float64 {
	var m int64
	for _, x := range s.rss {
		m = max(m, x)
	}
	return float64(m) / 1024
}

func (s series) print(name string) {
	if len(s.res) == 0 {
		return
	}
	rss := "-"
	if len(s.rss) > 0 {
		rss = fmt.Sprintf("%.1f MiB", s.rssMax())
	}
	fmt.Printf("%-44s %6d %9s %9s %9s %12s\n", name, len(s.res), ms(s.median()), ms(s.p95()), ms(s.pct(0)), rss)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

func ratio(x, y time.Duration) float64 { return float64(x) / float64(y) }

func buildCordon(out string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find module root (run from the repository): %w", err)
	}
	if err := goBuild(strings.TrimSpace(string(root)), out, "./cmd/cordon"); err != nil {
		return fmt.Errorf("build cordon: %w", err)
	}
	return nil
}

// goLauncherSrc is the smallest Go launcher: it only execs its arguments.
const goLauncherSrc = `package main

import (
	"os"
	"syscall"
)

func main() {
	panic(syscall.Exec(os.Args[1], os.Args[1:], os.Environ()))
}
`

// buildGoLauncher writes goLauncherSrc as its own module into dir and
// builds it to out.
func buildGoLauncher(dir, out string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{
		"go.mod":  "module golauncher\n\ngo 1.26\n",
		"main.go": goLauncherSrc,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	// Its own module, whatever go.work sits above the temp dir.
	if err := goBuild(dir, out, ".", "GOWORK=off"); err != nil {
		return fmt.Errorf("build the minimal Go launcher: %w", err)
	}
	return nil
}

// goBuild builds pkg in dir to out with CGO_ENABLED=0 (and env).
func goBuild(dir, out, pkg string, env ...string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// makeWorkspace is a small git repository: a few files, a commit.
func makeWorkspace(ws string) error {
	for name, body := range map[string]string{
		"README.md":       "# fixture\n",
		"go.mod":          "module fixture\n\ngo 1.26\n",
		"main.go":         "package main\n\nfunc main() {}\n",
		"internal/x/x.go": "package x\n",
		"docs/notes.txt":  "notes\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "."},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "fixture"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, out)
		}
	}
	return nil
}

func profile(cordon string, env []string, dir string, args ...string) (*launcher.Rendered, error) {
	cmd := exec.Command(cordon, append([]string{"profile", "--json"}, args...)...)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cordon profile: %w", err)
	}
	var r launcher.Rendered
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("cordon profile: %w", err)
	}
	for i := 0; i < len(r.Argv); i++ {
		switch r.Argv[i] {
		case "--seccomp": // shown with a placeholder fd; rawArgv passes its own
			r.Argv = slices.Delete(r.Argv, i, i+2)
			i--
		case "--args":
			return nil, fmt.Errorf("cordon profile: argv passes --args FD; the raw bwrap side of this benchmark must learn to supply it")
		}
	}
	return &r, nil
}

// rawArgv is the profile's bwrap argv with the seccomp filter the launcher
// adds at launch (bwrap.Seccomp, network off) read from fd, and cmd.
func rawArgv(prof *launcher.Rendered, fd int, cmd ...string) []string {
	// The profile ends its options with "--seccomp FD --": put the real
	// descriptor in place of FD.
	i := slices.Index(prof.Argv, "--")
	argv := slices.Clone(prof.Argv[:i])
	if j := slices.Index(argv, "--seccomp"); j >= 0 {
		argv = slices.Delete(argv, j, j+2)
	}
	argv = append(argv, "--seccomp", fmt.Sprint(fd), "--")
	return append(argv, cmd...)
}

// seccompFile holds the filter cordon's launches pass; rewind it before
// each use, since bwrap reads it through a shared file offset.
func seccompFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "seccomp-")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(bwrap.Seccomp(bwrap.SocketsFor(false))); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// rawCmd is raw bwrap with the seccomp filter on fd 3 (and extra after it).
func rawCmd(argv []string, filter *os.File, extra ...*os.File) (*exec.Cmd, error) {
	if _, err := filter.Seek(0, 0); err != nil {
		return nil, err
	}
	for _, f := range extra {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = append([]*os.File{filter}, extra...)
	return cmd, nil
}

func missing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// makeStubs makes the stubs that do not exist (cordon's lingering ones
// do) and returns those it made.
func makeStubs(stubs []string) ([]string, error) {
	var made []string
	for _, p := range stubs { // shallow to deep
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			removeStubs(made)
			return nil, err
		} else if err == nil {
			made = append(made, p)
		}
	}
	return made, nil
}

func removeStubs(stubs []string) {
	for _, p := range slices.Backward(stubs) {
		syscall.Rmdir(p)
	}
}

// checkSameMounts proves (b) is the same sandbox as (a): the mount table
// seen inside both is identical.
func checkSameMounts(cordon string, prof *launcher.Rendered, filter *os.File, stubs, env []string, ws string) error {
	read := "/proc/self/mountinfo"
	var got [2]string
	var out bytes.Buffer
	cmd := exec.Command(cordon, "run", "--workspace", ws, "--", "/bin/cat", read)
	cmd.Stdout = &out
	if _, err := sample(cmd, env, ws); err != nil {
		return err
	}
	got[0] = mountShape(out.String())
	made, err := makeStubs(stubs)
	if err != nil {
		return err
	}
	out.Reset()
	cmd, err = rawCmd(rawArgv(prof, 3, "/bin/cat", read), filter)
	if err != nil {
		return err
	}
	cmd.Stdout = &out
	_, err = sample(cmd, env, ws)
	removeStubs(made)
	if err != nil {
		return err
	}
	got[1] = mountShape(out.String())
	if got[0] != got[1] {
		return fmt.Errorf("raw bwrap is not the same sandbox as cordon run:\ncordon:\n%s\nraw:\n%s", got[0], got[1])
	}
	fmt.Printf("equivalence: cordon run and raw bwrap see the same %d mounts\n", strings.Count(got[0], "\n"))
	return nil
}

// mountShape keeps mount point, options and fs type of each mountinfo
// line: ids and device numbers differ between any two sandboxes.
func mountShape(mi string) string {
	var b strings.Builder
	for line := range strings.Lines(mi) {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		sep := slices.Index(f, "-")
		fstype := ""
		if sep >= 0 && sep+1 < len(f) {
			fstype = f[sep+1]
		}
		fmt.Fprintf(&b, "%s %s %s\n", f[4], f[5], fstype)
	}
	return b.String()
}

func countLines(name string) int {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

func findSrt(cfg config, tmp string) string {
	if cfg.srtN <= 0 {
		return ""
	}
	for _, p := range []string{cfg.srt, os.Getenv("SRT")} {
		if p != "" {
			return p
		}
	}
	if p, err := exec.LookPath("srt"); err == nil {
		return p
	}
	if !cfg.installSrt {
		return ""
	}
	dir := filepath.Join(tmp, "srt")
	cmd := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "@anthropic-ai/sandbox-runtime")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println("srt: npm install failed:", err)
		return ""
	}
	return filepath.Join(dir, "node_modules", ".bin", "srt")
}

func printMachine(ws string) {
	fmt.Println("== machine")
	fmt.Printf("nproc: %d   %s\n", runtime.NumCPU(), firstLine(cpuModel()))
	fmt.Printf("kernel: %s\n", readTrim("/proc/sys/kernel/osrelease"))
	if p, err := exec.LookPath("bwrap"); err == nil {
		out, _ := exec.Command(p, "--version").Output()
		fmt.Printf("bwrap: %s (%s)\n", strings.TrimSpace(string(out)), p)
	}
	fmt.Printf("go: %s\n", runtime.Version())
	fmt.Printf("workspace disk: %s\n", diskOf(ws))
	fmt.Printf("load average at start: %s\n", readTrim("/proc/loadavg"))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "model name") {
			_, v, _ := strings.Cut(line, ":")
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// diskOf names the filesystem and block device holding dir, and whether
// the device says it is rotational.
func diskOf(dir string) string {
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return "?"
	}
	maj, mnr := (st.Dev>>8)&0xfff, (st.Dev&0xff)|((st.Dev>>12)&0xfff00)
	fstype, src := "?", "?"
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 9 && f[2] == fmt.Sprintf("%d:%d", maj, mnr) {
			if i := slices.Index(f, "-"); i >= 0 && i+2 < len(f) {
				fstype, src = f[i+1], f[i+2]
			}
			break
		}
	}
	rot := readTrim(fmt.Sprintf("/sys/dev/block/%d:%d/queue/rotational", maj, mnr))
	if rot == "" {
		rot = readTrim(fmt.Sprintf("/sys/block/%s/queue/rotational", filepath.Base(src)))
	}
	kind := map[string]string{"0": "non-rotational", "1": "rotational"}[rot]
	if kind == "" {
		kind = "rotational: unknown"
	}
	return fmt.Sprintf("%s on %s (%s)", fstype, src, kind)
}

func readTrim(name string) string {
	b, _ := os.ReadFile(name)
	return strings.TrimSpace(string(b))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

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
	var cr series
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
		cr.add(result{wall: time.Since(start)})
	}
	argBytes := 0
	for _, a := range plan.Args {
		argBytes += len(a) + 1
	}
	fmt.Printf("\n== scale: %d roots (%d denied, %d writable, nested 100 chains × 10), directories exist\n",
		len(pol.DeniedRoots)+len(pol.WritableRoots), len(pol.DeniedRoots), len(pol.WritableRoots))
	fmt.Printf("canonicalize+render (in process, 21 runs): median %s, max %s (target ≤ 50ms)\n", ms(cr.median()), ms(cr.pct(100)))
	fmt.Printf("bwrap arguments: %d, %d bytes, passed through --args FD (ARG_MAX here: %d bytes; bwrap's own limit: %d arguments)\n", len(plan.Args), argBytes, argMax(), bwrapMaxArgs)

	prof, err := profile(cordon, env, tmp, "--policy", polFile, "--", "/bin/true")
	if err != nil {
		return err
	}
	if len(missing(prof.Stubs)) != 0 {
		return fmt.Errorf("scale fixture should need no stubs, profile lists %d", len(prof.Stubs))
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
	cmd := exec.Command(cordon, "run", "--policy", polFile, "--", "/bin/sh", "-c", script)
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

	var a, b series
	for i := range cfg.scaleN {
		steps := []func() error{
			func() error {
				s, err := sample(exec.Command(cordon, "run", "--policy", polFile, "--", "/bin/true"), env, tmp)
				a.add(s)
				return err
			},
			func() error {
				cmd, err := rawCmd([]string{prof.Argv[0], "--args", "4", "--", "/bin/true"}, filter, argsFile)
				if err != nil {
					return err
				}
				s, err := sample(cmd, env, tmp)
				b.add(s)
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
	a.print("cordon run --policy 2000.json -- /bin/true")
	b.print("raw bwrap --args FD, same arguments")
	fmt.Printf("ratio median cordon/raw = %.2f\n", ratio(a.median(), b.median()))
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

// inProcess runs launches through the launcher package in this process, so
// a CPU profile shows cordon's own work per launch without process start.
func inProcess(cfg config, tmp, ws string) error {
	os.Setenv(state.EnvDir, filepath.Join(tmp, "state", "cordon"))
	ctx := context.Background()
	launchOnce := func() error {
		p, err := policy.Workspace(ws, policy.WorkspaceOptions{})
		if err != nil {
			return err
		}
		cmd := launcher.CommandContext(ctx, p, "/bin/true")
		cmd.TmpDir = policy.PrivateTmpDir(p.WritableRoots[0])
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
		p, err := policy.Workspace(ws, policy.WorkspaceOptions{})
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
	}{{"policy.Workspace (preset + bounded scan)", presetT}, {"launcher.Render (canonicalize + render)", renderT}, {"preset + launcher.Run of /bin/true", runT}} {
		fmt.Printf("%-44s %6d %9s %9s %9s\n", x.name, len(x.s.res), ms(x.s.median()), ms(x.s.p95()), ms(x.s.pct(0)))
	}
	if cfg.cpuprofile != "" {
		fmt.Println("cpu profile:", cfg.cpuprofile, "(go tool pprof -top", cfg.cpuprofile+")")
	}
	return nil
}

// netThroughput downloads cfg.netMiB MiB from a server on the host's
// loopback with curl, straight from the host and from inside a sandbox
// through the proxy (dl.localhost:PORT, named exactly), alternated, and
// samples the peak RSS (VmHWM) of the cordon process that runs the proxy.
func netThroughput(cfg config, cordon string, env []string, ws string) error {
	curl, err := exec.LookPath("curl")
	if err != nil {
		fmt.Println("\n== network allowlist throughput: skipped (no curl)")
		return nil
	}
	size := int64(cfg.netMiB) << 20
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 131)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	direct := exec.Command(curl, "-sS", "--noproxy", "*", "-o", "/dev/null", "http://127.0.0.1:"+port+"/big")
	proxied := func() *exec.Cmd {
		return exec.Command(cordon, "run", "--workspace", ws, "--allow-domain", "dl.localhost:"+port, "--",
			curl, "-sS", "--noproxy", "", "-o", "/dev/null", "http://dl.localhost:"+port+"/big")
	}
	var d, pr series
	var hwm []int64
	for i := range cfg.netN {
		steps := []func() error{
			func() error {
				cmd := exec.Command(direct.Path, direct.Args[1:]...)
				s, err := sample(cmd, env, ws)
				d.add(s)
				return err
			},
			func() error {
				cmd := proxied()
				cmd.Env, cmd.Dir = env, ws
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				start := time.Now()
				if err := cmd.Start(); err != nil {
					return err
				}
				peak := make(chan int64, 1)
				stop := make(chan struct{})
				go func() {
					var last int64
					t := time.NewTicker(5 * time.Millisecond)
					defer t.Stop()
					for {
						if v := vmHWM(cmd.Process.Pid); v > 0 {
							last = v
						}
						select {
						case <-stop:
							peak <- last
							return
						case <-t.C:
						}
					}
				}()
				err := cmd.Wait()
				close(stop)
				pr.add(result{wall: time.Since(start)})
				hwm = append(hwm, <-peak)
				if err != nil {
					return fmt.Errorf("%v: %s", err, stderr.String())
				}
				return nil
			},
		}
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return err
			}
		}
	}
	mibs := func(t time.Duration) float64 { return float64(cfg.netMiB) / t.Seconds() }
	slices.Sort(hwm)
	fmt.Printf("\n== network allowlist throughput: %d MiB over HTTP from the host's loopback with curl, %d rounds alternated\n", cfg.netMiB, cfg.netN)
	fmt.Printf("direct (curl on the host):                 median %s = %.0f MiB/s\n", ms(d.median()), mibs(d.median()))
	fmt.Printf("through the proxy (cordon run, curl inside): median %s = %.0f MiB/s (a launch included)\n", ms(pr.median()), mibs(pr.median()))
	fmt.Printf("cordon's own peak RSS (VmHWM) during the proxied download: median %.1f MiB, max %.1f MiB (target ≤ 10 MiB)\n",
		float64(hwm[len(hwm)/2])/1024, float64(hwm[len(hwm)-1])/1024)
	return nil
}

// vmHWM is the peak resident set of process pid in KiB, 0 when unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kib)
			return kib
		}
	}
	return 0
}
