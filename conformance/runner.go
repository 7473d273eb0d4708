package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
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
	// Progress, when set, is called after each case (from one goroutine
	// at a time).
	Progress func(done, total int, r Result)
}

// Report is the outcome of a run.
type Report struct {
	Backend  string        `json:"backend"`
	Executor string        `json:"executor"`
	Users    []string      `json:"users"`
	Results  []Result      `json:"results"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	NA       int           `json:"notApplicable"`
	Elapsed  time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
}

// OK reports whether every applicable case passed (and at least one ran).
func (r *Report) OK() bool { return r.Failed == 0 && r.Passed > 0 }

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
	base := cfg.BaseDir
	if base == "" {
		d, err := os.MkdirTemp(FixtureParent(), "cordon-verify-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		if _, err := Base(d, cfg.Users, ""); err != nil {
			return nil, err
		}
		base = d
	}
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
	rep := &Report{Backend: cfg.Executor.Backend(), Executor: cfg.Executor.Name()}
	for _, u := range cfg.Users {
		rep.Users = append(rep.Users, u.Name)
	}
	rep.Results = make([]Result, len(jobs))
	ch := make(chan job)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				dir := filepath.Join(base, fmt.Sprintf("%03d-%s.%s", j.i, j.c.Name, j.u.Name))
				r := RunCase(ctx, cfg.Executor, j.u, j.c, dir, cacheDir(base, j.u))
				os.RemoveAll(dir)
				mu.Lock()
				rep.Results[j.i] = r
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(jobs), r)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	for _, r := range rep.Results {
		switch r.Outcome {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		default:
			rep.NA++
		}
	}
	rep.Elapsed = time.Since(start)
	rep.Seconds = rep.Elapsed.Seconds()
	return rep, nil
}

// RunCase runs one case as one user with its fixture in dir (created
// here) and cordon's cache in cache.
func RunCase(ctx context.Context, x Executor, u User, c *Case, dir, cache string) (res Result) {
	start := time.Now()
	res = Result{Case: c.Name, Class: c.Class.String(), User: u.Name, Outcome: Pass}
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

// FixtureParent is where fixture bases are made: the system temp directory,
// except on macOS, where $TMPDIR is the user's temp folder, which the
// workspace preset makes writable there (docs/design.md); fixtures that
// stand for the rest of the host go to /private/tmp instead.
func FixtureParent() string {
	if runtime.GOOS == "darwin" {
		return "/private/tmp"
	}
	return ""
}
