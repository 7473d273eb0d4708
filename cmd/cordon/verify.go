package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/detect"
)

// The attack helper runs inside sandboxes as 'cordon __attack NAME': the
// few attempts no shell tool can make (TIOCSTI, ptrace, renameat2, reading
// leaked descriptors, a nested user namespace). It is dispatched here,
// before main, rather than registered, so that it never shows in help.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "__attack" {
		os.Exit(conformance.Attack(os.Args[2:], os.Stdout, os.Stderr))
	}
	register("verify", "run the conformance suite: real escape attempts on this host", cmdVerify)
}

const verifyHelp = `Usage: cordon verify [--backend B] [--run REGEXP] [--json] [--junit FILE]

Runs cordon's conformance suite on this host: every case builds a fixture
in a temporary directory, runs a real escape attempt (or ordinary work)
inside the sandbox through 'cordon run', and is judged by the host's state
and the attempt's output. As root, every case runs again as an unprivileged
user (` + conformance.UnprivName + `, created with useradd -M -r if missing).

Progress goes to stderr, one line per case; then a table and a summary.
Cases that cannot apply to this backend or host are "n/a", never passed.
Exit status: 0 when every applicable case passed, 1 otherwise.

Examples:
  cordon verify
  cordon verify --run 'symlink|rename' 
  cordon verify --json > verify.json
  cordon verify --junit report.xml

`

func cmdVerify(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	backend := fs.String("backend", "auto", "sandbox `BACKEND`: auto, bwrap, native or seatbelt")
	runRE := fs.String("run", "", "run only cases whose name matches `REGEXP`")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout instead of the table")
	junit := fs.String("junit", "", "also write the report as JUnit XML to `FILE`")
	workers := fs.Int("workers", 4, "cases run in parallel")
	quiet := fs.Bool("quiet", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, verifyHelp, "Flags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return errorf(e, exitUsage, "verify: unexpected argument %q", fs.Arg(0))
	}
	switch *backend {
	case "auto", "bwrap", "native", "seatbelt":
	default:
		return errorf(e, exitUsage, "verify: --backend %q: want auto, bwrap, native or seatbelt", *backend)
	}
	cases, err := conformance.Filter(conformance.Catalogue(), *runRE)
	if err != nil {
		return errorf(e, exitUsage, "verify: %v", err)
	}
	if len(cases) == 0 {
		return errorf(e, exitUsage, "verify: --run %q matches no case", *runRE)
	}
	res := detect.Detect(ctx, *backend)
	if !res.Usable || res.Nested {
		return errorf(e, exitFail, "verify: backend %s is not usable here: %s", *backend, res.Reason)
	}

	users := []conformance.User{conformance.Invoker()}
	if os.Getuid() == 0 && runtime.GOOS == "linux" {
		u, err := conformance.Unprivileged()
		if err != nil {
			return errorf(e, exitFail, "verify: running as root, the suite also runs every case as an unprivileged user: %v", err)
		}
		users = append(users, u)
	}
	self, err := os.Executable()
	if err != nil {
		return errorf(e, exitCordonError, "verify: %v", err)
	}
	base, err := os.MkdirTemp(conformance.FixtureParent(), "cordon-verify-")
	if err != nil {
		return errorf(e, exitCordonError, "verify: %v", err)
	}
	defer os.RemoveAll(base)
	// Every user must be able to run cordon and the attack helper: copy
	// this binary next to the fixtures (go run builds under a 0700 dir).
	bin, err := conformance.Base(base, users, self)
	if err != nil {
		return errorf(e, exitCordonError, "verify: %v", err)
	}
	cfg := conformance.Config{
		Executor: &conformance.Binary{Path: bin, BackendName: res.Backend},
		Users:    users, Cases: cases, Workers: *workers, BaseDir: base,
	}
	if !*quiet {
		cfg.Progress = func(done, total int, r conformance.Result) {
			fmt.Fprintf(e.stderr, "[%3d/%d] %-4s %s (%s) %.2fs\n", done, total, r.Outcome, r.Case, r.User, r.Seconds)
		}
	}
	rep, err := conformance.Run(ctx, cfg)
	if err != nil {
		return errorf(e, exitCordonError, "verify: %v", err)
	}
	if *junit != "" {
		f, err := os.Create(*junit)
		if err == nil {
			err = rep.WriteJUnit(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return errorf(e, exitCordonError, "verify: --junit %s: %v", *junit, err)
		}
	}
	if *asJSON {
		if err := rep.WriteJSON(e.stdout); err != nil {
			return errorf(e, exitCordonError, "verify: %v", err)
		}
		fmt.Fprintln(e.stderr, rep.Summary())
	} else {
		rep.WriteTable(e.stdout)
	}
	if !rep.OK() {
		return exitFail
	}
	return exitOK
}
