package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cordon-sandbox/cordon/audit"
)

func init() {
	register("audit", "check an audit log's hash chain and anchor", cmdAudit)
}

const auditHelp = `Usage: cordon audit verify FILE

Checks the audit log FILE written by 'cordon demo --audit FILE' or
'cordon hook claude-code --audit FILE': every record's hash, the chain from
each record to the one before, and the anchor FILE.head (record count and
last hash). Names the first bad record when one was edited, inserted,
removed or reordered, or when the log was cut short.

Examples:
  cordon demo --audit /tmp/demo.jsonl && cordon audit verify /tmp/demo.jsonl
  cordon audit verify ~/.cordon/claude-code.jsonl

Exit status: 0 intact, 1 tampered (or unreadable), 2 bad usage.

`

func cmdAudit(_ context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, auditHelp) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 2 || fs.Arg(0) != "verify" {
		fs.Usage()
		return exitUsage
	}
	recs, err := audit.Verify(fs.Arg(1))
	if err != nil {
		var ve *audit.VerifyError
		if !errors.As(err, &ve) {
			return errorf(e, exitFail, "audit verify: %v", err)
		}
		fmt.Fprintf(e.stdout, "TAMPERED  %v\n", err)
		fmt.Fprintf(e.stdout, "The %d record(s) before it are intact.\n", len(recs))
		return exitFail
	}
	fmt.Fprintf(e.stdout, "OK  %s: %d records, hash chain and anchor intact\n", fs.Arg(1), len(recs))
	return exitOK
}
