package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/launcher"
)

// The attack helper runs inside sandboxes as 'cordon __attack NAME': the
// few attempts no shell tool can make (TIOCSTI, ptrace, renameat2, reading
// leaked descriptors, a nested user namespace). It is dispatched here,
// before main, rather than registered, so that it never shows in help.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "__attack" {
		os.Exit(conformance.Attack(os.Args[2:], os.Stdout, os.Stderr))
	}
}

var verifyCommand = &command{
	name: "verify", summary: "run the conformance suite: real escape attempts on this host",
	usage: "[--backend B] [--run REGEXP] [--json] [--junit FILE] [--workers N] [--quiet]",
	help:  verifyHelp,
	setup: func(fs *flag.FlagSet) action {
		o := &verifyOpts{}
		sandboxFlag(fs, &o.backend, "sandbox `BACKEND`: auto, bwrap, native, landlock or seatbelt", "none is no sandbox, so there is nothing to verify")
		fs.StringVar(&o.runRE, "run", "", "run only cases whose name matches `REGEXP`")
		fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON on stdout instead of the table")
		pathVar(fs, &o.junit, "junit", "", "also write the report as JUnit XML to `FILE`")
		fs.IntVar(&o.workers, "workers", 4, "run `N` cases in parallel")
		fs.BoolVar(&o.quiet, "quiet", false, "no progress lines")
		return o.run
	},
}

const verifyHelp = `Runs cordon's conformance suite on this host: every case builds a fixture
in a temporary directory, runs a real escape attempt (or ordinary work)
inside the sandbox through 'cordon run', and is judged by the host's state
and the attempt's output. As root, every case runs again as an unprivileged
user (` + conformance.UnprivName + `, created with useradd -M -r if missing, with its home directory).

Progress goes to stderr, one line per case; then a table and a summary.
Cases that cannot apply to this backend or host are "n/a", never passed.
When the backend is not usable here, the report (table, --json, --junit)
holds one failed case, backend-usable, whose detail says why. The --junit
file's directory is checked before the suite starts.

Interrupted (Ctrl-C, SIGTERM: a CI job's timeout), it stops the cases
running, reports each case it did not run to its end as "not run" (never
as failed), removes its fixtures and exits 128+N; a second signal stops
at once.

Exit status: 0 when every applicable case passed, 1 otherwise (also when
the backend is not usable here), 2 bad usage, 125 a cordon error, 130
(SIGINT) or 143 (SIGTERM) interrupted.

Examples:
  cordon verify
  cordon verify --run 'symlink|rename'
  cordon verify --json > verify.json
  cordon verify --junit report.xml
`

// verifyOpts are verify's flags.
type verifyOpts struct {
	backend       launcher.Backend
	runRE, junit  string
	asJSON, quiet bool
	workers       int
	// stopped is the signal that interrupted the run, or 0.
	stopped func() syscall.Signal
}

func (o *verifyOpts) run(ctx context.Context, e *env, _ []string) int {
	if o.workers < 1 {
		return usageError(e, "--workers %d: give 1 or more", o.workers)
	}
	// The suite's context ends through this handler only, not through
	// main's (SIGTERM), so that the signal that stopped it is known.
	ctx, stopped, release := interruptible(context.WithoutCancel(ctx), e.stderr)
	defer release()
	o.stopped = stopped
	cases, err := conformance.Filter(conformance.Catalogue(), o.runRE)
	if err != nil {
		return usageError(e, "%v", err)
	}
	if len(cases) == 0 {
		return usageError(e, "--run %q matches no case", o.runRE)
	}
	// The JUnit file's directory is checked before the suite runs: a bad
	// path must not throw a run of minutes away.
	junit, err := o.openJUnit()
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	defer junit.discard()
	res := detect.Detect(ctx, string(o.backend))
	if o.stopped() != 0 {
		// What detection says once interrupted is no verdict on the host.
		return o.report(e, conformance.NotRunReport(&conformance.Binary{BackendName: string(o.backend)},
			[]conformance.User{conformance.Invoker()}, cases, context.Cause(ctx).Error()), junit)
	}
	if !res.Usable || res.Nested {
		backend := res.Backend
		if backend == "" || res.Nested {
			backend = string(o.backend)
		}
		why := fmt.Sprintf("backend %s is not usable here: %s", o.backend, res.Reason)
		errorf(e, exitFail, "%s", why)
		return o.report(e, cannotStart(backend, "backend-usable", why), junit)
	}
	if res.Landlock != "" && !o.quiet {
		// What the cases below are run against: two walls, or one.
		fmt.Fprintf(e.stderr, "native: landlock: %s\n", res.Landlock)
	}
	users := []conformance.User{conformance.Invoker()}
	if os.Getuid() == 0 && runtime.GOOS == "linux" {
		u, err := conformance.Unprivileged()
		if err != nil {
			why := fmt.Sprintf("running as root, the suite also runs every case as an unprivileged user: %v", err)
			errorf(e, exitFail, "%s", why)
			return o.report(e, cannotStart(res.Backend, "unprivileged-user", why), junit)
		}
		users = append(users, u)
	}
	base, err := os.MkdirTemp(conformance.FixtureParent(), "cordon-verify-")
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	defer func() {
		if err := conformance.RemoveFixture(base); err != nil {
			fmt.Fprintf(e.stderr, "cordon verify: fixtures left behind: %v\n", err)
		}
	}()
	rep, err := o.suite(ctx, e, res.Backend, users, cases, base)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	return o.report(e, rep, junit)
}

// cannotStart is the report of a suite that could not start: one failed
// pseudo-case named what was missing, whose detail says why, so that a
// reader of the JSON or the JUnit file sees the failure and its reason
// rather than nothing.
func cannotStart(backend, name, why string) *conformance.Report {
	u := conformance.Invoker().Name
	return &conformance.Report{
		Backend: backend, Executor: (&conformance.Binary{}).Name(), Users: []string{u},
		Results: []conformance.Result{{Case: name, Class: "setup", User: u, Outcome: conformance.Fail, Detail: why}},
		Failed:  1,
	}
}

// junitFile is the --junit file being written: a temporary file in the
// same directory, renamed over the name once the report is complete, so
// an existing report survives a run that ends in an error.
type junitFile struct {
	name string
	tmp  *os.File // nil: no --junit
}

// openJUnit creates the temporary file for --junit, which proves the
// directory writable.
func (o *verifyOpts) openJUnit() (*junitFile, error) {
	j := &junitFile{name: o.junit}
	if o.junit == "" {
		return j, nil
	}
	if fi, err := os.Stat(o.junit); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("--junit %s: is a directory", o.junit)
	}
	f, err := os.CreateTemp(filepath.Dir(o.junit), "."+filepath.Base(o.junit)+".*")
	if err != nil {
		return nil, fmt.Errorf("--junit %s: %w", o.junit, err)
	}
	j.tmp = f
	return j, nil
}

// write writes rep to the file and gives it its name.
func (j *junitFile) write(rep *conformance.Report) error {
	if j.tmp == nil {
		return nil
	}
	err := rep.WriteJUnit(j.tmp)
	if err == nil {
		err = j.tmp.Chmod(0o644) // CreateTemp's 0600 would be a surprise for a report
	}
	if cerr := j.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(j.tmp.Name(), j.name)
	}
	if err != nil {
		return fmt.Errorf("--junit %s: %w", j.name, err)
	}
	j.tmp = nil
	return nil
}

// discard removes the temporary file of a report never written.
func (j *junitFile) discard() {
	if j.tmp != nil {
		j.tmp.Close()
		os.Remove(j.tmp.Name())
	}
}

// suite runs cases as users, with fixtures under base.
func (o *verifyOpts) suite(ctx context.Context, e *env, backend string, users []conformance.User, cases []conformance.Case, base string) (*conformance.Report, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// Every user must be able to run cordon and the attack helper: copy
	// this binary next to the fixtures (go run builds under a 0700 dir).
	bin, err := conformance.Base(base, users, self)
	if err != nil {
		return nil, err
	}
	cfg := conformance.Config{
		Executor: &conformance.Binary{Path: bin, BackendName: backend},
		Users:    users, Cases: cases, Workers: o.workers, BaseDir: base,
	}
	if !o.quiet {
		cfg.Progress = func(done, total int, r conformance.Result) {
			fmt.Fprintf(e.stderr, "[%3d/%d] %-4s %s (%s) %.2fs\n", done, total, r.Outcome, r.Case, r.User, r.Seconds)
		}
	}
	return conformance.Run(ctx, cfg)
}

// report writes rep as asked and returns verify's exit status.
func (o *verifyOpts) report(e *env, rep *conformance.Report, junit *junitFile) int {
	if err := junit.write(rep); err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	if o.asJSON {
		if err := rep.WriteJSON(e.stdout); err != nil {
			return errorf(e, exitCordonError, "%v", err)
		}
		fmt.Fprintln(e.stderr, rep.Summary())
	} else {
		rep.WriteTable(e.stdout)
	}
	if sig := o.stopped(); sig != 0 {
		return 128 + int(sig)
	}
	if !rep.OK() {
		return exitFail
	}
	return exitOK
}

// interruptible returns a context that ends, its cause naming the signal,
// at the first SIGINT or SIGTERM; the function that says which one came
// (0: none); and the one that stops listening. A second signal exits at
// once, leaving what the suite was doing as it is.
func interruptible(parent context.Context, stderr io.Writer) (context.Context, func() syscall.Signal, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	quit := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			var s os.Signal
			select {
			case s = <-ch:
			case <-quit:
				return
			}
			sig := s.(syscall.Signal)
			if n > 0 {
				dir := conformance.FixtureParent()
				if dir == "" {
					dir = os.TempDir()
				}
				fmt.Fprintf(stderr, "cordon verify: %s again: stopped at once; fixtures may be left in %s\n", signalName(sig), filepath.Join(dir, "cordon-verify-*"))
				os.Exit(128 + int(sig))
			}
			got.Store(int32(sig))
			fmt.Fprintf(stderr, "cordon verify: %s: stopping the cases (a second signal stops at once)\n", signalName(sig))
			cancel(fmt.Errorf("interrupted by %s", signalName(sig)))
		}
	}()
	release := func() {
		signal.Stop(ch)
		close(quit)
		cancel(nil)
	}
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }, release
}

// signalName is the name users know a signal by.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}
