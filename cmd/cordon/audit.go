package main

import (
	"context"
	"encoding/json"
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
			usage: "[--key FILE] [--json] [LOG]", help: auditVerifyHelp + "\n" + auditHelp,
			maxArgs: 1, anyOrder: true,
			setup: func(fs *flag.FlagSet) action {
				var keyFile string
				var asJSON bool
				pathVar(fs, &keyFile, "key", "", "verify with the key in `FILE` (from 'cordon audit key export') instead of this machine's")
				fs.BoolVar(&asJSON, "json", false, `print {"path","verdict","records","key","detail"} (verdict: OK, UNKEYED, WRONG KEY or TAMPERED)`)
				return func(_ context.Context, e *env, args []string) int { return auditVerify(e, keyFile, args, asJSON) }
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

Exit status: 0 verified; 1 tampered, unkeyed or the wrong key; 2 bad
usage; 125 the log or the key could not be read (no answer either way).
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

// auditVerdict is what audit verify found: the verdict, how many records
// verified (all of them for OK; those before the first bad one for
// TAMPERED; -1 where the verdict says none), the key's id for OK, and the
// verdict's detail.
type auditVerdict struct {
	Path    string `json:"path"`
	Verdict string `json:"verdict"`
	Records int    `json:"records"`
	Key     string `json:"key,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

func auditVerify(e *env, keyFile string, args []string, asJSON bool) int {
	var path string
	if len(args) == 1 {
		path = args[0]
	}
	if path == "" {
		var err error
		if path, err = audit.DefaultPath(hookLogName); err != nil {
			return errorf(e, exitCordonError, "%v", err)
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
		return errorf(e, exitCordonError, "%v", err) // no answer without the key
	}
	recs, err := audit.Verify(path, key)
	v := auditVerdict{Path: path, Records: -1}
	var ve *audit.VerifyError
	var ke *audit.KeyError
	switch {
	case err == nil:
		v.Verdict, v.Records, v.Key = "OK", len(recs), key.ID()
	case errors.Is(err, audit.ErrUnkeyed):
		v.Verdict, v.Detail = "UNKEYED", err.Error()
	case errors.As(err, &ke):
		v.Verdict, v.Detail = "WRONG KEY", err.Error()
	case errors.As(err, &ve):
		v.Verdict, v.Records, v.Detail = "TAMPERED", len(recs), err.Error()
	default:
		// The log could not be read at all (missing, a directory, no
		// permission): no answer either way.
		return errorf(e, exitCordonError, "%v", err)
	}
	if asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return errorf(e, exitCordonError, "encode json: %v", err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		switch v.Verdict {
		case "OK":
			fmt.Fprintf(e.stdout, "OK  %s: %d records, keyed chain and anchor intact (key %s)\n", path, v.Records, v.Key)
		case "TAMPERED":
			fmt.Fprintf(e.stdout, "TAMPERED  %s\n", shown.String(v.Detail)) // a tampered record may quote what it holds
			fmt.Fprintf(e.stdout, "The %d record(s) before it are intact.\n", v.Records)
		default:
			fmt.Fprintf(e.stdout, "%s  %s\n", v.Verdict, shown.String(v.Detail))
		}
	}
	if v.Verdict != "OK" {
		return exitFail
	}
	return exitOK
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
