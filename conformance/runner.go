package conformance

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/internal/buildinfo"
)

// Config is one run of the catalogue.
type Config struct {
	Executor Executor
	// Users are the users every case runs as (see Users in Case).
	Users []User
	// Cases to run; nil means Catalogue().
	Cases []Case
	// Workers run cases in parallel; 0 means 4.
	Workers int
	// BaseDir holds the fixtures; "" means a new temporary directory,
	// removed at the end.
	BaseDir string
	// Progress, when set, is called after each case that ran to its end
	// (from one goroutine at a time).
	Progress func(done, total int, r Result)
	// Grace is how long a run whose context ends (an interrupted verify)
	// waits for the cases still running to wind down before it reports
	// them not run; 0 means 5 seconds. Their launches are told to stop
	// (SIGTERM, then SIGKILL) as the context ends.
	Grace time.Duration
}

// Report is the outcome of a run.
type Report struct {
	Backend  string   `json:"backend"`
	Executor string   `json:"executor"`
	Users    []string `json:"users"`
	Results  []Result `json:"results"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	NA       int      `json:"notApplicable"`
	// NotRun counts the cases an interrupted run did not run to their
	// end: never started, or stopped half-way.
	NotRun int `json:"notRun"`
	// Interrupted, when set, says what stopped the run before its end
	// (the context's cause: "interrupted by SIGTERM").
	Interrupted string        `json:"interrupted,omitempty"`
	Elapsed     time.Duration `json:"-"`
	Seconds     float64       `json:"seconds"`
	// Cordon is the cordon that ran the suite.
	Cordon buildinfo.Info `json:"cordon"`
}

// OK reports whether every applicable case passed (and at least one ran)
// in a run that was not interrupted.
func (r *Report) OK() bool {
	return r.Failed == 0 && r.Passed > 0 && r.NotRun == 0 && r.Interrupted == ""
}

// Filter keeps the cases whose name matches re ("" keeps all).
func Filter(cases []Case, re string) ([]Case, error) {
	if re == "" {
		return cases, nil
	}
	rx, err := regexp.Compile(re)
	if err != nil {
		return nil, fmt.Errorf("--run %q: %w", re, err)
	}
	var out []Case
	for _, c := range cases {
		if rx.MatchString(c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Base prepares a fixture base directory every user can traverse, with a
// cordon cache directory per user, and copies the helper binary there when
// helper is not "". It returns the helper's new path.
func Base(dir string, users []User, helper string) (string, error) {
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	for _, u := range users {
		c := cacheDir(dir, u)
		if err := os.MkdirAll(c, 0o700); err != nil {
			return "", err
		}
		if err := os.Chown(c, u.Uid, u.Gid); err != nil && !u.Invoker {
			return "", err
		}
	}
	if helper == "" {
		return "", nil
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return "", err
	}
	return copyExecutable(helper, bin)
}

func cacheDir(base string, u User) string {
	return filepath.Join(base, fmt.Sprintf("cache-%d", u.Uid))
}

// Run runs every case as every user with a pool of workers.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	cases := cfg.Cases
	if cases == nil {
		cases = Catalogue()
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 4
	}
	base, remove, err := fixtureBase(cfg)
	if err != nil {
		return nil, err
	}
	defer remove()
	type job struct {
		i int
		c *Case
		u User
	}
	var jobs []job
	for i := range cases {
		for _, u := range cfg.Users {
			jobs = append(jobs, job{len(jobs), &cases[i], u})
		}
	}
	rep := &Report{Backend: cfg.Executor.Backend(), Executor: cfg.Executor.Name(), Cordon: buildinfo.Get()}
	for _, u := range cfg.Users {
		rep.Users = append(rep.Users, u.Name)
	}
	rep.Results = make([]Result, len(jobs))
	ran := make([]bool, len(jobs))
	ch := make(chan job)
	var mu sync.Mutex
	done, closed := 0, false
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if ctx.Err() != nil {
					continue // taken as the run stopped: not run
				}
				dir := filepath.Join(base, fmt.Sprintf("%03d-%s.%s", j.i, j.c.Name, j.u.Name))
				r := RunCase(ctx, cfg.Executor, j.u, j.c, dir, cacheDir(base, j.u))
				RemoveFixture(dir)
				mu.Lock()
				// A case still running when the run was interrupted did
				// not run to its end: what it says then is no verdict
				// (its launches were stopped under it).
				if ctx.Err() == nil && !closed {
					rep.Results[j.i], ran[j.i] = r, true
					done++
					if cfg.Progress != nil {
						cfg.Progress(done, len(jobs), r)
					}
				}
				mu.Unlock()
			}
		}()
	}
dispatch:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(ch)
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	settle(ctx, ended, cfg.Grace)
	mu.Lock()
	closed = true
	mu.Unlock()
	if ctx.Err() != nil {
		rep.Interrupted = context.Cause(ctx).Error()
	}
	for i, j := range jobs {
		if !ran[i] {
			rep.Results[i] = notRun(j.c, j.u, rep.Interrupted)
		}
	}
	rep.count()
	rep.Elapsed = time.Since(start)
	rep.Seconds = rep.Elapsed.Seconds()
	return rep, nil
}

// fixtureBase is cfg's base directory, or a new one that remove removes.
func fixtureBase(cfg Config) (base string, remove func(), err error) {
	if cfg.BaseDir != "" {
		return cfg.BaseDir, func() {}, nil
	}
	d, err := os.MkdirTemp(FixtureParent(), "cordon-verify-")
	if err != nil {
		return "", nil, err
	}
	if _, err := Base(d, cfg.Users, ""); err != nil {
		RemoveFixture(d)
		return "", nil, err
	}
	return d, func() { RemoveFixture(d) }, nil
}

// settle waits for the workers to end. Interrupted, the cases in flight
// get grace (5 s by default) to stop their launches and run their
// cleanups; one that takes longer is left behind, reported not run like
// the others.
func settle(ctx context.Context, ended <-chan struct{}, grace time.Duration) {
	select {
	case <-ended:
		return
	case <-ctx.Done():
	}
	if grace <= 0 {
		grace = 5 * time.Second
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
	}
}

// NotRunReport is the report of a run interrupted (for why) before its
// first case: every case, as every user, not run.
func NotRunReport(x Executor, users []User, cases []Case, why string) *Report {
	rep := &Report{Backend: x.Backend(), Executor: x.Name(), Interrupted: why, Cordon: buildinfo.Get()}
	for _, u := range users {
		rep.Users = append(rep.Users, u.Name)
	}
	for i := range cases {
		for _, u := range users {
			rep.Results = append(rep.Results, notRun(&cases[i], u, why))
		}
	}
	rep.count()
	return rep
}

func notRun(c *Case, u User, why string) Result {
	return Result{Case: c.Name, Class: c.Class.String(), User: u.Name, Outcome: NotRun, Detail: "not run: " + why}
}

// count tallies the results.
func (r *Report) count() {
	r.Passed, r.Failed, r.NA, r.NotRun = 0, 0, 0, 0
	for _, x := range r.Results {
		switch x.Outcome {
		case Pass:
			r.Passed++
		case Fail:
			r.Failed++
		case NotRun:
			r.NotRun++
		default:
			r.NA++
		}
	}
}

// RunCase runs one case as one user with its fixture in dir (created
// here) and cordon's cache in cache.
func RunCase(ctx context.Context, x Executor, u User, c *Case, dir, cache string) (res Result) {
	start := time.Now()
	res = Result{Case: c.Name, Class: c.Class.String(), User: u.Name, Outcome: Pass, Started: start}
	defer func() {
		res.Elapsed = time.Since(start)
		res.Seconds = float64(res.Elapsed.Round(time.Millisecond)) / float64(time.Second)
	}()
	na := func(why string) Result {
		res.Outcome, res.Detail = NotApplicable, why
		return res
	}
	if why := c.notApplicable(x.Backend()); why != "" {
		return na(why)
	}
	if c.RootHarness != "" && os.Geteuid() != 0 {
		return na("needs the suite run as root: " + c.RootHarness)
	}
	switch {
	case c.Users == RootOnly && !u.root():
		return na("about a launcher running as root")
	case c.Users == UnprivilegedOnly && u.root():
		return na("about an unprivileged launcher")
	}
	for _, n := range c.Needs {
		if _, err := lookPath(n); err != nil {
			return na("needs " + n + " on PATH")
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o755); err != nil {
		res.Outcome, res.Detail = Fail, "fixture: "+err.Error()
		return res
	}
	os.Chmod(dir, 0o755)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		res.Outcome, res.Detail = Fail, "fixture: "+err.Error()
		return res
	}
	h := &H{ctx: ctx, x: x, User: u, Dir: real, Home: filepath.Join(real, "home"),
		Secret: newSecret(), Cache: cache, keep: map[string]bool{}}
	naWhy := ""
	func() {
		defer func() {
			if v := recover(); v != nil {
				if s, ok := v.(stop); ok {
					naWhy = s.notApplicable
					return
				}
				h.Errorf("panic: %v\n%s", v, debug.Stack())
			}
		}()
		c.Run(h)
	}()
	for i := len(h.cleanups) - 1; i >= 0; i-- {
		h.cleanups[i]()
	}
	switch {
	case len(h.failures) > 0:
		res.Outcome, res.Detail = Fail, strings.Join(h.failures, "\n")
	case naWhy != "":
		return na(naWhy)
	}
	return res
}

// FixtureParent is where fixture bases are made: a place that stands for
// the rest of the host. On Linux that is /var/tmp, not /tmp: native and
// bwrap mount a private /tmp (docs/design.md), so a fixture in the host's
// /tmp would be out of sight inside and every refusal there would hold for
// that reason alone, not by the wall the case judges. On macOS, $TMPDIR
// is the user's temp folder, which the workspace preset makes writable
// there, so fixtures go to /private/tmp. Elsewhere, or when /var/tmp is
// not a shared sticky directory, the system temp directory.
func FixtureParent() string {
	if runtime.GOOS == "darwin" {
		return "/private/tmp"
	}
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() && fi.Mode()&(fs.ModeSticky|0o777) == fs.ModeSticky|0o777 {
		return "/var/tmp"
	}
	return ""
}
