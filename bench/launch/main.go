//go:build linux

// Command launch is cordon's launch benchmark (BENCHMARKS.md).
//
// In one run it builds cordon (CGO_ENABLED=0), makes a workspace fixture
// (a git repository with a few files) and alternates, N times:
//
//	(a) cordon run --backend bwrap --workspace W -- /bin/true
//	(a0) the same with CORDON_STUB_LINGER=0, in a workspace of its own
//	(an) the same as (a) through --backend native
//	(b) the raw bwrap command with the same argv ('cordon profile --json'),
//	    mount stubs created beforehand, outside the timing: the floor
//	(c) the same raw bwrap command with the same stub directories created
//	    before it and removed after it, inside the timing: like for like
//	(d) Anthropic's srt, when installed, for the first -srt-n rounds
//	(dx) Codex's sandbox ('codex sandbox', workspace-write), when found,
//	    for the first -codex-n rounds
//	(e) the same raw bwrap command as (b), started through a minimal Go
//	    launcher (syscall.Exec of its arguments, built CGO_ENABLED=0): the
//	    floor any Go launcher pays, exec plus Go runtime start
//	(en) the native sandbox of (an), with the same mounts and filter,
//	    started by a minimal Go launcher of its own (nativefloor/): the
//	    floor of the native backend, two Go starts and a CLONE_NEWUSER
//	    fork; (an)-(en) is cordon's own work per native launch, as
//	    (a)-(e) is per bwrap launch
//	(ak) (a) through --backend landlock, when this cordon has it
//	(p) (an) with a network allowlist (--allow-domain example.com): cordon
//	    stays to run the proxy, and the native init makes the listener
//	(pb) (a) with the same allowlist: a helper inside hands over the listener
//
// With -net (the default) it then downloads -net-mib MiB over HTTP from a
// server on the host's loopback with curl, straight from the host and
// through the proxy from inside a sandbox, and samples the peak RSS of the
// cordon process running the proxy.
//
// Then the large-workspace cases (large.go): workspaces with 300 and
// 1,000 nested repositories and policies of 100 to 4,000 roots, each
// launched through bwrap and through the native backend, alternated.
//
// Each sample is the wall time of exec.Cmd Start+Wait in this process (no
// shell in between); peak RSS is GNU time's %M (measureRSS says why not
// wait4). A fresh cordon state directory (CORDON_STATE_DIR) and
// CORDON_PROBE_LOG count detection probes: the cold first launch and
// every warm launch after it. Then a policy of 2,000 nested roots is
// canonicalized, rendered and launched, through cordon and through raw
// bwrap --args FD with the same arguments.
//
// The launch comparison is launch.go, its fixtures fixtures.go, the
// series and their statistics stats.go; net.go, large.go, scale.go and
// inprocess.go hold the other measurements; peers.go the comparison with
// landstrip and raw bwrap, with and without many host processes.
//
//	go run ./bench/launch               # or bench/launch.sh
//	go run ./bench/launch -n 500 -srt-n 0
//	go run ./bench/launch -inproc 300 -cpuprofile /tmp/launch.pprof
//	go run ./bench/launch -large-only -large-n 10
//	go run ./bench/launch -peers 40 -hosts 3000 -install-landstrip
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
)

type config struct {
	n          int
	srtN       int
	srt        string
	codex      string
	codexN     int
	hookN      int
	gap        time.Duration
	installSrt bool
	scale      bool
	scaleN     int
	rssN       int
	inproc     int
	cpuprofile string
	keep       bool
	wallsOnly  bool
	dir        string
	// large workspaces (large.go)
	largeOnly bool
	largeN    int
	repos     []int
	growth    []int
	net       bool
	netMiB    int
	netN      int
	// the peer comparison (peers.go)
	peers            int
	hosts            int
	landstrip        string
	installLandstrip bool
	cordonBin        string
	before           string
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 200, "alternation rounds of (a), (b), (c), (e)")
	flag.IntVar(&cfg.srtN, "srt-n", 20, "rounds that also run srt (it takes ~0.5 s or more each); 0 skips it")
	flag.StringVar(&cfg.srt, "srt", "", "path of Anthropic's srt (default: $SRT, else srt in PATH)")
	flag.StringVar(&cfg.codex, "codex", "", "path of Codex's CLI, whose 'codex sandbox' is a peer (default: $CODEX, else the e2e suite's cached install, else codex in PATH)")
	flag.IntVar(&cfg.codexN, "codex-n", 20, "rounds that also run Codex's sandbox; 0 skips it")
	flag.DurationVar(&cfg.gap, "gap", 0, "with -walls-only -inproc: pause between launches, so that each sandbox's teardown ends before the next launch")
	flag.IntVar(&cfg.hookN, "hook-n", 0, "instead of the launches: time N rounds of 'cordon hook claude-code' calls")
	flag.BoolVar(&cfg.installSrt, "install-srt", false, "npm install @anthropic-ai/sandbox-runtime into the temp dir when srt is not found")
	flag.BoolVar(&cfg.scale, "scale", true, "also canonicalize, render and launch a policy of 2,000 nested roots")
	flag.IntVar(&cfg.scaleN, "scale-n", 10, "launches of the 2,000-root policy (alternated with raw bwrap)")
	flag.IntVar(&cfg.rssN, "rss-n", 20, "rounds that also measure peak RSS under /usr/bin/time -f %M (untimed)")
	flag.IntVar(&cfg.inproc, "inproc", 0, "instead: run N launches in this process through the launcher package (for -cpuprofile)")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "with -inproc: write a CPU profile of the in-process launches to `FILE`")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the temp dir")
	flag.BoolVar(&cfg.wallsOnly, "walls-only", false, "run only the native launch with and without the second wall's steps ((an), (ax), (aL), (aR), (al)), -n rounds; with -inproc N, in this process instead, one binary")
	flag.BoolVar(&cfg.net, "net", true, "also measure the network allowlist's proxy: throughput of a large download through it against one straight from the host, and cordon's memory meanwhile")
	flag.IntVar(&cfg.netMiB, "net-mib", 512, "size of the -net download in MiB")
	flag.IntVar(&cfg.netN, "net-n", 5, "rounds of the -net download (alternated with the direct one)")
	flag.StringVar(&cfg.dir, "dir", "", "parent of the temp dir (default $TMPDIR); the workspace lives there, so its disk is the one measured")
	flag.BoolVar(&cfg.largeOnly, "large-only", false, "run only the large-workspace cases")
	flag.IntVar(&cfg.largeN, "large-n", 10, "rounds of each large-workspace case and backend (0 skips them)")
	flag.IntVar(&cfg.peers, "peers", 0, "instead: N rounds of the peer comparison (landlock, landstrip, native, raw bwrap; peers.go)")
	flag.IntVar(&cfg.hosts, "hosts", 0, "with -peers: then the same rounds with N more processes on the host")
	flag.StringVar(&cfg.landstrip, "landstrip", "", "path of landstrip's native binary (default: $LANDSTRIP, else the one -install-landstrip installs)")
	flag.BoolVar(&cfg.installLandstrip, "install-landstrip", false, "with -peers: npm install landstrip "+landstripVersion+" into the benchmark's own directory in the user's cache")
	flag.StringVar(&cfg.before, "before", "", "with -peers: a second cordon binary, measured as (ak0) and (an0) in the same rounds (a before/after of one run)")
	flag.StringVar(&cfg.cordonBin, "cordon", "", "with -peers: the cordon binary to measure (default: built from this checkout)")
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
	if cfg.peers > 0 {
		return peers(cfg, tmp, ws)
	}
	if cfg.inproc > 0 && cfg.wallsOnly {
		return inProcessWalls(cfg, tmp, ws)
	}
	if cfg.inproc > 0 {
		return inProcess(cfg, tmp, ws)
	}

	cordon := filepath.Join(tmp, "cordon")
	if err := buildCordon(cordon); err != nil {
		return err
	}
	// (al): the native init of one wall, as it was before Landlock: the
	// steps left out at link time, as the mutation check leaves them out.
	oneWall := filepath.Join(tmp, "cordon-onewall")
	if err := buildCordon(oneWall, "-ldflags=-X github.com/cordon-sandbox/cordon/internal/testhook.NativeWeaken=landlock,own-root"); err != nil {
		return err
	}
	golauncher := filepath.Join(tmp, "golauncher")
	if err := buildGoLauncher(filepath.Join(tmp, "golauncher-src"), golauncher); err != nil {
		return err
	}
	nativeFloor := filepath.Join(tmp, "nativefloor")
	if err := buildNativeFloor(nativeFloor); err != nil {
		return err
	}
	probeLog := filepath.Join(tmp, "probes.log")
	env := append(os.Environ(), state.EnvDir+"="+filepath.Join(tmp, "state", "cordon"), "CORDON_PROBE_LOG="+probeLog)
	printMachine(ws)
	if cfg.largeOnly {
		return large(cfg, tmp, cordon, env)
	}
	if cfg.hookN > 0 {
		return hookCalls(cfg, cordon, golauncher, env, ws)
	}

	lb := newLaunchBench(cfg, cordon, env, ws, probeLog)
	lb.oneWall, lb.nativeFloor = oneWall, nativeFloor
	defer lb.close()
	if cfg.wallsOnly {
		if err := lb.buildWallVariants(tmp); err != nil {
			return err
		}
		return lb.compareWalls()
	}
	if err := lb.coldLaunch(); err != nil {
		return err
	}
	if err := lb.prepare(tmp, golauncher); err != nil {
		return err
	}
	if err := lb.compare(); err != nil {
		return err
	}
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
		if err := scale(cfg, tmp, cordon, lb.filter, env); err != nil {
			return fmt.Errorf("scale: %w", err)
		}
		fmt.Printf("probes in the whole run: %d (the cold launch's)\n", countLines(probeLog))
	}
	return nil
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
