package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cordon-sandbox/cordon/audit"
)

func init() {
	register("audit", "verify an audit log; export the key that signs audit logs", cmdAudit)
}

// hookLogName is the hook's log in cordon's state directory.
const hookLogName = "claude-code.jsonl"

const auditHelp = `Usage: cordon audit verify [--key FILE] [LOG]
       cordon audit key export [FILE]
       cordon audit forget LOG
       cordon audit path

cordon's audit logs are JSON lines, each record chained to the one before
by an HMAC-SHA256 under a key of yours that cordon keeps in its state
directory (made on first use, mode 0600, denied inside every sandbox), with
an anchor LOG.head (record count, last MAC, size) beside the log.

verify checks every record's MAC and link and the anchor. It names the first
bad record when one was edited, inserted, removed or reordered, the log was
cut short, or the log was rewritten and re-chained by someone without the
key. LOG defaults to the Claude Code hook's log (see 'cordon audit path').
  --key FILE   verify with the key in FILE (from 'cordon audit key export')
               instead of this machine's: for a log written elsewhere
A log of the old unkeyed format is reported UNKEYED, never as verified.

key export writes your key to FILE (created, mode 0600; never overwrites),
or prints it. Copy it along with a log to verify the log on another machine;
whoever has the key can also forge logs that verify, so keep it private.

For a log outside its state directory, cordon also keeps its own copy of
the anchor there, out of every sandbox's reach: a log that was removed,
replaced by another, or rolled back to a copy saved earlier is reported by
verify and refused by the next append. If you removed or replaced a log on
purpose, 'forget LOG' drops cordon's copy so that a new log can start there.

path prints where the hook keeps its log by default.

Which commands write a log:
  cordon hook claude-code   by default: cordon's own log, or --audit FILE
                            (--no-audit: none)
  cordon run --audit FILE   one "launch" record per sandbox it starts
  cordon demo               a throw-away log, or --audit FILE
A log you name is never opened through a symlink, must be a regular file of
yours, and is read-only inside the sandboxes launched with it.

Examples:
  cordon audit verify
  cordon demo --audit /tmp/demo.jsonl && cordon audit verify /tmp/demo.jsonl
  cordon audit key export ~/cordon-audit.key
  cordon audit verify --key ~/cordon-audit.key ./copied/claude-code.jsonl

Exit status: 0 verified, 1 tampered, unkeyed, wrong key or unreadable,
2 bad usage.

`

func cmdAudit(_ context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, auditHelp)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, auditHelp)
		return exitOK
	case "verify":
		return auditVerify(e, args[1:])
	case "key":
		return auditKey(e, args[1:])
	case "forget":
		if len(args) != 2 || strings.HasPrefix(args[1], "-") {
			if len(args) == 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
				fmt.Fprint(e.stdout, auditHelp)
				return exitOK
			}
			return errorf(e, exitUsage, "audit forget: usage: cordon audit forget LOG")
		}
		forgot, err := audit.Forget(args[1])
		if err != nil {
			return errorf(e, exitFail, "audit forget: %v", err)
		}
		if forgot {
			fmt.Fprintf(e.stdout, "cordon no longer holds %s to its past records; the next append starts or continues it as it is\n", args[1])
		} else {
			fmt.Fprintf(e.stdout, "cordon kept no anchor of %s\n", args[1])
		}
		return exitOK
	case "path":
		if len(args) > 1 {
			return errorf(e, exitUsage, "audit path: unexpected argument %q", args[1])
		}
		p, err := audit.DefaultPath(hookLogName)
		if err != nil {
			return errorf(e, exitFail, "audit path: %v", err)
		}
		fmt.Fprintln(e.stdout, p)
		return exitOK
	}
	return errorf(e, exitUsage, "audit: unknown subcommand %q; see 'cordon audit --help'", args[0])
}

// auditFlags parses a subcommand's flags, before or after its arguments,
// and returns the arguments; done says to return code.
func auditFlags(e *env, name string, args []string, def func(*flag.FlagSet)) (rest []string, code int, done bool) {
	fs := flag.NewFlagSet("audit "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def(fs)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(e.stdout, auditHelp)
				return nil, exitOK, true
			}
			return nil, errorf(e, exitUsage, "audit %s: %v; see 'cordon audit --help'", name, err), true
		}
		if fs.NArg() == 0 {
			return rest, 0, false
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func auditVerify(e *env, args []string) int {
	var keyFile string
	rest, code, done := auditFlags(e, "verify", args, func(fs *flag.FlagSet) {
		fs.StringVar(&keyFile, "key", "", "")
	})
	if done {
		return code
	}
	if len(rest) > 1 {
		return errorf(e, exitUsage, "audit verify: one log at a time (got %d); usage: cordon audit verify [--key FILE] [LOG]", len(rest))
	}
	var path string
	if len(rest) == 1 {
		path = rest[0]
	}
	if path == "" {
		var err error
		if path, err = audit.DefaultPath(hookLogName); err != nil {
			return errorf(e, exitFail, "audit verify: %v", err)
		}
	}
	var key *audit.Key
	var err error
	if keyFile != "" {
		key, err = audit.ReadKey(keyFile)
	} else {
		key, err = audit.ExistingUserKey()
	}
	if err != nil {
		return errorf(e, exitFail, "audit verify: %v", err)
	}
	recs, err := audit.Verify(path, key)
	var ve *audit.VerifyError
	var ke *audit.KeyError
	switch {
	case err == nil:
		fmt.Fprintf(e.stdout, "OK  %s: %d records, keyed chain and anchor intact (key %s)\n", path, len(recs), key.ID())
		return exitOK
	case errors.Is(err, audit.ErrUnkeyed):
		fmt.Fprintf(e.stdout, "UNKEYED  %v\n", err)
		return exitFail
	case errors.As(err, &ke):
		fmt.Fprintf(e.stdout, "WRONG KEY  %v\n", err)
		return exitFail
	case errors.As(err, &ve):
		fmt.Fprintf(e.stdout, "TAMPERED  %v\n", err)
		fmt.Fprintf(e.stdout, "The %d record(s) before it are intact.\n", len(recs))
		return exitFail
	}
	return errorf(e, exitFail, "audit verify: %v", err)
}

func auditKey(e *env, args []string) int {
	if len(args) == 0 || args[0] != "export" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(e.stdout, auditHelp)
			return exitOK
		}
		return errorf(e, exitUsage, "audit key: usage: cordon audit key export [FILE]")
	}
	rest, code, done := auditFlags(e, "key export", args[1:], func(*flag.FlagSet) {})
	if done {
		return code
	}
	if len(rest) > 1 {
		return errorf(e, exitUsage, "audit key export: one file at a time; usage: cordon audit key export [FILE]")
	}
	key, err := audit.ExistingUserKey()
	if err != nil {
		return errorf(e, exitFail, "audit key export: %v (cordon makes it when it first writes a log)", err)
	}
	if len(rest) == 0 {
		e.stdout.Write(key.Export())
		return exitOK
	}
	if err := audit.WriteKey(rest[0], key); err != nil {
		return errorf(e, exitFail, "audit key export: %v", err)
	}
	fmt.Fprintf(e.stderr, "cordon: wrote audit key %s to %s (mode 0600)\n", key.ID(), rest[0])
	return exitOK
}
