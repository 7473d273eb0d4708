package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/cordon-sandbox/cordon/internal/buildinfo"
)

var versionCommand = &command{
	name: "version", summary: "say which cordon this is",
	usage: "[--json]",
	help: `Prints the version cordon was released as (or "devel" for a build from a
clone), the revision of the tree it was built from, that revision's time,
whether the tree had changes not committed, and the Go version and
platform it was built with. 'cordon --version' and 'cordon -v' print the
same line. detect --json and verify's JSON and JUnit reports carry the
same facts, so a report names the cordon that produced it.

Examples:
  cordon version
  cordon version --json | jq -r .revision

Exit status: 0, 2 bad usage.
`,
	setup: func(fs *flag.FlagSet) action {
		asJSON := fs.Bool("json", false, `print {"version","revision","time","modified","go","platform"} as JSON`)
		return func(_ context.Context, e *env, _ []string) int {
			i := buildinfo.Get()
			if !*asJSON {
				fmt.Fprintln(e.stdout, i)
				return exitOK
			}
			b, err := json.Marshal(i)
			if err != nil {
				return errorf(e, exitCordonError, "encode json: %v", err)
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			return exitOK
		}
	},
}
