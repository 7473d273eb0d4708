package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/demo"
	"github.com/cordon-sandbox/cordon/launcher"
)

var demoCommand = &command{
	name: "demo", summary: "walk through the permission pipeline, scripted",
	usage: "[--audit FILE] [--backend B] [--json]",
	help:  demoHelp,
	setup: func(fs *flag.FlagSet) action {
		o := &demoOpts{}
		pathVar(fs, &o.auditPath, "audit", "", "write the audit log to `FILE`, in a directory that exists (default: a temporary file, removed afterwards)")
		sandboxFlag(fs, &o.backend, "sandbox `BACKEND` for the shell step: auto, bwrap, native, landlock or seatbelt", "the demo never runs its shell step unconfined")
		fs.BoolVar(&o.asJSON, "json", false, `print {"ok", "steps": [{"title","tool","action","rule_id","reason","approval","outcome","expected","as_scripted"}]}`)
		return o.run
	},
}

// demoOpts are demo's flags.
type demoOpts struct {
	auditPath string
	backend   launcher.Backend
	asJSON    bool
}

const demoHelp = `Runs a scripted agent session against a throw-away workspace and shows what
cordon does with each tool call: the decision (ALLOW, ASK or DENY), the rule
that made it and why, what the (scripted) person answered when asked, and
what happened. Ten steps: a read, writes approved / rejected / cancelled, a
hard-denied shell command, a path outside the workspace, a symlink escape,
an unknown tool, a failing handler, and a shell command that the kernel
sandbox confines. It needs no terminal, model or network.

Every call is written to a keyed, hash-chained audit log, read-only inside
the sandbox of the shell steps; with --audit FILE, check it afterwards with
'cordon audit verify FILE'.

Examples:
  cordon demo
  cordon demo --audit /tmp/demo.jsonl && cordon audit verify /tmp/demo.jsonl

Exit status: 0 when every step went as scripted, 1 otherwise, 2 bad
usage, 125 a cordon error (no usable sandbox backend, an --audit FILE
that cannot be written), said before any step.
`

func (o *demoOpts) run(ctx context.Context, e *env, _ []string) int {
	// No usable backend is a cordon error, as for 'cordon run'
	// (docs/design.md, section 3): said once, before any step.
	if r := detect.Detect(ctx, string(o.backend)); !r.Usable {
		return errorf(e, exitCordonError, "backend %s is not usable here: %s (the demo never runs its shell steps unconfined)", o.backend, r.Reason)
	}
	opts := demo.Options{AuditPath: o.auditPath, Backend: string(o.backend), Spawn: sandboxSpawner(string(o.backend))}
	out := e.stdout
	steps := []demo.StepReport{}
	if o.asJSON {
		out = io.Discard
		opts.Record = func(s demo.StepReport) { steps = append(steps, s) }
	}
	ok, err := demo.Run(ctx, out, opts)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	if o.asJSON {
		b, err := json.Marshal(struct {
			OK    bool              `json:"ok"`
			Steps []demo.StepReport `json:"steps"`
		}{ok, steps})
		if err != nil {
			return errorf(e, exitCordonError, "encode json: %v", err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	}
	if !ok {
		return exitFail
	}
	return exitOK
}
