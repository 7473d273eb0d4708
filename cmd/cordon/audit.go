package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/internal/shown"
)

var auditCommand = &command{
	name: "audit", summary: "verify an audit log; export the key that signs audit logs",
	help: auditHelp + "\n" + auditVerifyHelp + "\n" + auditKeyHelp + "\n" + auditForgetHelp + "\n" + auditPathHelp + "\n" + auditWhoHelp,
	subs: []*command{
		{name: "audit verify", summary: "check a log's records, chain and anchor",
			usage: "[--key FILE] [LOG]", help: auditVerifyHelp + "\n" + auditHelp,
			maxArgs: 1, anyOrder: true,
			setup: func(fs *flag.FlagSet) action {
				var keyFile string
				pathVar(fs, &keyFile, "key", "", "verify with the key in `FILE` (from 'cordon audit key export') instead of this machine's")
				return func(_ context.Context, e *env, args []string) int { return auditVerify(e, keyFile, args) }
			}},
		{name: "audit key", summary: "the key that signs your audit logs", help: auditKeyHelp,
			subs: []*command{{name: "audit key export", summary: "write or print the key",
				usage: "[FILE]", help: auditKeyHelp, maxArgs: 1, anyOrder: true,
				setup: func(*flag.FlagSet) action { return auditKeyExport }}}},
		{name: "audit forget", summary: "drop cordon's anchor of a log you removed or replaced",
			usage: "LOG", help: auditForgetHelp, minArgs: 1, maxArgs: 1, missing: "name the LOG", anyOrder: true,
			setup: func(*flag.FlagSet) action { return auditForget }},
		{name: "audit path", summary: "print where the hook keeps its log",
			help: auditPathHelp, setup: func(*flag.FlagSet) action { return auditPath }},
	},
}

// hookLogName is the hook's log in cordon's state directory.
const hookLogName = "claude-code.jsonl"

const auditHelp = `cordon's audit logs are JSON lines, each record chained to the one before
by an HMAC-SHA256 under a key of yours that cordon keeps in its state
directory (made on first use, mode 0600, denied inside every sandbox), with
an anchor LOG.head (record count, last MAC, size) beside the log.
`

const auditVerifyHelp = `verify checks every record's MAC and link and the anchor. It names the first
bad record when one was edited, inserted, removed or reordered, the log was
cut short, or the log was rewritten and re-chained by someone without the
key. LOG defaults to the Claude Code hook's log (see 'cordon audit path').
With --key FILE it verifies with the key in FILE instead of this machine's:
for a log written elsewhere. A log of the old unkeyed format is reported
UNKEYED, never as verified.

Examples:
  cordon audit verify
  cordon demo --audit /tmp/demo.jsonl && cordon audit verify /tmp/demo.jsonl
  cordon audit verify --key ~/cordon-audit.key ./copied/claude-code.jsonl

Exit status: 0 verified; 1 tampered, unkeyed, wrong key or unreadable;
2 bad usage.
`

const auditKeyHelp = `key export writes your key to FILE (created, mode 0600; never overwrites),
or prints it. Copy it along with a log to verify the log on another machine;
whoever has the key can also forge logs that verify, so keep it private.

Example:
  cordon audit key export ~/cordon-audit.key

Exit status: 0 exported, 2 bad usage, 125 no key yet or FILE not written.
`

const auditForgetHelp = `For a log outside its state directory, cordon also keeps its own copy of
the anchor there, out of every sandbox's reach: a log that was removed,
replaced by another, or rolled back to a copy saved earlier is reported by
verify and refused by the next append. If you removed or replaced a log on
purpose, 'forget LOG' drops cordon's copy so that a new log can start there.

Exit status: 0 done, 2 bad usage, 125 cordon's copy could not be removed.
`

const auditPathHelp = `path prints where the hook keeps its log by default.
`

const auditWhoHelp = `Which commands write a log:
  cordon hook claude-code   by default: cordon's own log, or --audit FILE
                            (--no-audit: none)
  cordon run --audit FILE   one "launch" record per sandbox it starts
  cordon demo               a throw-away log, or --audit FILE
A log you name is never opened through a symlink, must be a regular file of
yours, and is read-only inside the sandboxes launched with it.
`

func auditForget(_ context.Context, e *env, args []string) int {
	forgot, err := audit.Forget(args[0])
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	if forgot {
		fmt.Fprintf(e.stdout, "cordon no longer holds %s to its past records; the next append starts or continues it as it is\n", args[0])
	} else {
		fmt.Fprintf(e.stdout, "cordon kept no anchor of %s\n", args[0])
	}
	return exitOK
}

func auditPath(_ context.Context, e *env, _ []string) int {
	p, err := audit.DefaultPath(hookLogName)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	fmt.Fprintln(e.stdout, p)
	return exitOK
}

func auditVerify(e *env, keyFile string, args []string) int {
	var path string
	if len(args) == 1 {
		path = args[0]
	}
	if path == "" {
		var err error
		if path, err = audit.DefaultPath(hookLogName); err != nil {
			return errorf(e, exitFail, "%v", err)
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
		return errorf(e, exitFail, "%v", err)
	}
	recs, err := audit.Verify(path, key)
	var ve *audit.VerifyError
	var ke *audit.KeyError
	switch {
	case err == nil:
		fmt.Fprintf(e.stdout, "OK  %s: %d records, keyed chain and anchor intact (key %s)\n", path, len(recs), key.ID())
		return exitOK
	case errors.Is(err, audit.ErrUnkeyed):
		fmt.Fprintf(e.stdout, "UNKEYED  %s\n", shown.String(err.Error()))
		return exitFail
	case errors.As(err, &ke):
		fmt.Fprintf(e.stdout, "WRONG KEY  %s\n", shown.String(err.Error()))
		return exitFail
	case errors.As(err, &ve):
		fmt.Fprintf(e.stdout, "TAMPERED  %s\n", shown.String(err.Error())) // a tampered record may quote what it holds
		fmt.Fprintf(e.stdout, "The %d record(s) before it are intact.\n", len(recs))
		return exitFail
	}
	return errorf(e, exitFail, "%v", err)
}

func auditKeyExport(_ context.Context, e *env, rest []string) int {
	key, err := audit.ExistingUserKey()
	if err != nil {
		return errorf(e, exitCordonError, "%v (cordon makes it when it first writes a log)", err)
	}
	if len(rest) == 0 {
		e.stdout.Write(key.Export())
		return exitOK
	}
	if err := audit.WriteKey(rest[0], key); err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	errorf(e, 0, "wrote audit key %s to %s (mode 0600)", key.ID(), rest[0])
	return exitOK
}
