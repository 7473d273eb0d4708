package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
)

func init() {
	register("explain", "say what the policy allows on paths, and which root decides", cmdExplain)
}

const explainHelp = `Usage: cordon explain [POLICY] [--json] PATH...

For each PATH, prints whether the sandbox may read and write it and the
root that decides: the deepest root containing the path wins. PATH is
resolved through symlinks first, as the kernel would; a relative PATH is
taken from the current directory.

Example:
  cordon explain --workspace . .git/hooks/pre-commit src/main.go ~/.ssh/id_ed25519

`

func cmdExplain(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var pf policyFlags
	pf.register(fs)
	asJSON := fs.Bool("json", false, "print one JSON object per path")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, explainHelp, policyHelp, "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		return errorf(e, exitUsage, "explain: no PATH given")
	}
	comp, err := pf.compose(nil)
	if err != nil {
		return errorf(e, exitCordonError, "explain: %v", err)
	}
	printNotes(e, "explain", comp.Canonical.Notes())
	c := comp.Canonical
	enc := json.NewEncoder(e.stdout)
	for _, in := range fs.Args() {
		abs, err := filepath.Abs(in)
		if err != nil {
			return errorf(e, exitCordonError, "explain: %q: %v", in, err)
		}
		rp, err := policy.Resolve(abs)
		if err != nil {
			return errorf(e, exitCordonError, "explain: %v", err)
		}
		v := c.Explain(rp)
		if *asJSON {
			enc.Encode(v)
			continue
		}
		shown := rp
		if rp != abs {
			shown = fmt.Sprintf("%s (as %s)", rp, in)
		}
		fmt.Fprintf(e.stdout, "%s\n  read: %s  write: %s  %s\n", shown, yesNo(v.Read), yesNo(v.Write), v.Reason)
	}
	return exitOK
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no "
}
