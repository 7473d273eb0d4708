// Package demo is 'cordon demo': a scripted agent session in a
// throw-away workspace that shows what the permission pipeline does with
// each tool call (the decision and its rule, the scripted person's
// answer, the result) and checks on the host that the sandbox around the
// shell held. It needs no terminal, model or network.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/permission"
	"github.com/cordon-sandbox/cordon/runner"
)

// step is one scripted tool call and what should come of it.
type step struct {
	title   string
	explain string
	req     permission.Request
	answer  string // what the scripted person says if asked: yes, no, cancel
	want    runner.Outcome
}

// Options are 'cordon demo”s flags, and the sandbox of its shell steps.
type Options struct {
	// AuditPath keeps the audit log there, keyed with the user's key so
	// that 'cordon audit verify' checks it later; "" is a throw-away log
	// with a key of its own.
	AuditPath string
	// Backend is the sandbox backend of the shell steps ("" is auto).
	Backend string
	// Spawn runs the shell steps' commands in that sandbox.
	Spawn runner.Spawner
	// Record, when set, is told of each step as it ends ('cordon demo
	// --json').
	Record func(StepReport)
}

// StepReport is one step of the session, as it went.
type StepReport struct {
	Title      string `json:"title"`
	Tool       string `json:"tool"`
	Action     string `json:"action"` // ALLOW, ASK or DENY
	RuleID     string `json:"rule_id"`
	Reason     string `json:"reason"`
	Approval   string `json:"approval"`
	Outcome    string `json:"outcome"` // BLOCKED, SUCCEEDED or FAILED
	Expected   string `json:"expected"`
	AsScripted bool   `json:"as_scripted"`
}

// Run plays the session in a throw-away directory, printing to w. ok
// reports whether every step went as scripted and the audit log
// verified; err is a failure to set the session up.
func Run(ctx context.Context, w io.Writer, o Options) (ok bool, err error) {
	base, err := os.MkdirTemp("", "cordon-demo-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(base)
	base, _ = filepath.EvalSymlinks(base)
	ws, outside := filepath.Join(base, "workspace"), filepath.Join(base, "outside")
	if err := makeFixture(ws, outside); err != nil {
		return false, fmt.Errorf("set up %s: %w", base, err)
	}
	keepAudit, logPath := o.AuditPath != "", o.AuditPath
	if !keepAudit {
		logPath = filepath.Join(base, "audit.jsonl")
	}
	key, log, err := openLog(logPath, keepAudit)
	if err != nil {
		return false, err
	}
	d, err := permission.New(permission.Config{Workspace: ws})
	if err != nil {
		return false, err
	}
	steps := script(outside)
	r := newRunner(d, steps, log, o.Spawn)
	fmt.Fprintf(w, "cordon demo: a scripted agent makes %d tool calls in a throw-away workspace.\n", len(steps))
	fmt.Fprintf(w, "  workspace  %s  (notes.txt, and link-to-secret -> ../outside/secret.txt)\n", ws)
	fmt.Fprintf(w, "  outside    %s  (secret.txt: the agent must never see or touch it)\n", outside)
	fmt.Fprintln(w, "Each call is decided (ALLOW, ASK or DENY, by a named rule); only an ASK is put")
	fmt.Fprintln(w, "to a person, here a script that answers for them; then the call runs or is blocked.")
	prior, _ := audit.Verify(logPath, key) // a kept log may hold earlier runs
	ok = play(ctx, w, r, steps, o.Backend, outside, o.Record)
	r.Stop(ctx)

	recs, err := audit.Verify(logPath, key)
	if err != nil {
		fmt.Fprintf(w, "\nAudit: %v\n", err)
		return false, nil
	}
	fmt.Fprintf(w, "\nAudit: %d records (request, permission, result for each call), hash chain intact.\n", len(recs)-len(prior))
	if len(prior) > 0 {
		fmt.Fprintf(w, "  The log holds %d records in all, with earlier runs'.\n", len(recs))
	}
	if keepAudit {
		fmt.Fprintf(w, "  Check it yourself: cordon audit verify %s\n", logPath)
	}
	if !ok {
		fmt.Fprintln(w, "\nSome steps did not go as scripted (marked !!).")
		return false, nil
	}
	fmt.Fprintln(w, "\nEvery step went as scripted.")
	return true, nil
}

// openLog opens the demo's audit log at path. A log the user keeps is
// keyed with their key, so that 'cordon audit verify' checks it later;
// the throw-away one with a key of its own.
func openLog(path string, keep bool) (*audit.Key, *audit.Log, error) {
	key, err := audit.NewKey()
	if keep && err == nil {
		key, err = audit.UserKey()
	}
	if err != nil {
		return nil, nil, err
	}
	log, err := audit.Open(path, key)
	if err == nil && keep {
		// A log that cannot be written stops the demo here, before any
		// step, rather than blocking every one of them.
		err = log.Check()
	}
	if err != nil && keep {
		err = fmt.Errorf("--audit %s: %w", path, err)
	}
	return key, log, err
}

// newRunner is the governed runner of the demo: its file handlers, its
// shell (spawn, in the sandbox), and a scripted person who answers as
// steps say.
func newRunner(d *permission.Decider, steps []step, log *audit.Log, spawn runner.Spawner) *runner.Runner {
	answers := map[string]string{}
	for _, s := range steps {
		answers[s.req.ToolUseID] = s.answer
	}
	handlers := runner.FileHandlers(d)
	handlers[permission.ToolBash] = runner.Bash{Spawn: spawn, Workspace: d.Workspace(), ReadOnly: log.Protect()}.Handler()
	return &runner.Runner{
		Decider:  d,
		Handlers: handlers,
		Audit:    log,
		Approver: runner.ApproverFunc(func(_ context.Context, call *permission.Call, dec permission.Decision) (bool, error) {
			switch answers[dec.ToolUseID] {
			case "yes":
				return true, nil
			case "no":
				return false, nil
			}
			return false, errors.New("the prompt was interrupted (Ctrl-C)")
		}),
	}
}

// play runs the steps, prints what came of each to w, and checks the
// host afterwards; it reports whether everything went as scripted.
func play(ctx context.Context, w io.Writer, r *runner.Runner, steps []step, backend, outside string, record func(StepReport)) bool {
	sandbox := detect.Detect(ctx, backend)
	ok := true
	for i, s := range steps {
		fmt.Fprintf(w, "\n── %d/%d  %s\n", i+1, len(steps), s.title)
		fmt.Fprintf(w, "   %s\n", s.explain)
		// Without a sandbox a shell command the rules let through fails
		// closed; one they deny is blocked before any sandbox is needed.
		if s.req.Name == permission.ToolBash && !sandbox.Usable && s.want != runner.Blocked {
			fmt.Fprintf(w, "   NO SANDBOX: no usable sandbox backend on this host (%s).\n", sandbox.Reason)
			fmt.Fprintln(w, "   cordon never runs a shell command unconfined, so this call will fail closed.")
			s.want = runner.Failed
		}
		fmt.Fprintf(w, "   request   %s %s\n", s.req.Name, s.req.Arguments)
		res := r.Run(ctx, s.req)
		printResult(w, res, s.answer)
		if res.Outcome != s.want {
			ok = false
			fmt.Fprintf(w, "   !! expected %s\n", s.want)
		}
		if record != nil {
			record(StepReport{Title: s.title, Tool: s.req.Name, Action: fmt.Sprint(res.Decision.Action), RuleID: res.Decision.RuleID,
				Reason: res.Decision.Reason, Approval: fmt.Sprint(res.Approval), Outcome: fmt.Sprint(res.Outcome),
				Expected: fmt.Sprint(s.want), AsScripted: res.Outcome == s.want})
		}
	}
	escaped := filepath.Join(outside, "escaped.txt")
	if _, err := os.Lstat(escaped); err == nil {
		ok = false
		fmt.Fprintf(w, "\n!! %s exists: the shell command escaped the sandbox\n", escaped)
	} else if sandbox.Usable {
		fmt.Fprintf(w, "\nHost check: %s was never created.\n", escaped)
		fmt.Fprintf(w, "No rule could see that write inside an approved shell command; the %s sandbox stopped it.\n", sandbox.Backend)
	}
	return ok
}

func printResult(w io.Writer, res runner.Result, answer string) {
	fmt.Fprintf(w, "   decision  %s  %s\n", res.Decision.Action, res.Decision.RuleID)
	fmt.Fprintf(w, "             %s\n", res.Decision.Reason)
	switch res.Approval {
	case runner.NotRequired:
		fmt.Fprintf(w, "   approval  %s (only ASK is ever put to a person)\n", res.Approval)
	default:
		fmt.Fprintf(w, "   approval  %s (the scripted person answered %q)\n", res.Approval, answer)
	}
	fmt.Fprintf(w, "   result    %s\n", res.Outcome)
	block := res.Block()
	text := strings.TrimRight(block.Content, "\n")
	if res.Outcome == runner.Blocked {
		text = "the handler was not called" + map[bool]string{true: "; " + res.Error, false: ""}[res.Error != ""]
	}
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 8 {
		lines = append(lines[:8], fmt.Sprintf("... (%d more lines)", len(lines)-8))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "             | %s\n", l)
	}
}

// makeFixture makes the workspace (notes.txt, link-to-secret) and the
// directory outside it (secret.txt).
func makeFixture(ws, outside string) error {
	for _, dir := range []string{ws, outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("TODO: ship the release\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("api-key=hunter2\n"), 0o600); err != nil {
		return err
	}
	return os.Symlink(filepath.Join("..", "outside", "secret.txt"), filepath.Join(ws, "link-to-secret"))
}

// script is the session, step by step.
func script(outside string) []step {
	mk := func(id, name string, args map[string]any) permission.Request {
		// No HTML escaping: the request is printed for people to read.
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(args)
		return permission.Request{ToolUseID: id, Name: name, Arguments: json.RawMessage(strings.TrimSpace(b.String()))}
	}
	return []step{
		{"Read a file inside the workspace",
			"Reads inside the workspace are allowed without asking.",
			mk("toolu_01", "read_file", map[string]any{"path": "notes.txt"}), "", runner.Succeeded},
		{"Write a file: asked, approved",
			"Changing files needs a person's approval; here they say yes.",
			mk("toolu_02", "write_file", map[string]any{"path": "plan.md", "content": "1. test\n2. release\n"}), "yes", runner.Succeeded},
		{"Edit a file: asked, rejected",
			"The same kind of request; this time the person says no, so nothing is changed.",
			mk("toolu_03", "edit_file", map[string]any{"path": "notes.txt", "old_string": "TODO", "new_string": "DONE"}), "no", runner.Blocked},
		{"Write a file: asked, cancelled",
			"The person presses Ctrl-C (or input ends) instead of answering: cancelled counts as no.",
			mk("toolu_04", "write_file", map[string]any{"path": "notes.txt", "content": ""}), "cancel", runner.Blocked},
		{"A hard-denied shell command",
			"Some commands are never allowed, however they are wrapped: here sudo, inside bash -c, behind env.",
			mk("toolu_05", "bash", map[string]any{"command": "env DEBIAN_FRONTEND=noninteractive bash -c 'sudo apt-get install -y netcat'"}), "yes", runner.Blocked},
		{"Read outside the workspace",
			"A relative path that climbs out with .. is resolved first, then denied; nobody is asked.",
			mk("toolu_06", "read_file", map[string]any{"path": "../outside/secret.txt"}), "yes", runner.Blocked},
		{"Read through a symlink that points outside",
			"The path looks inside the workspace, but resolves outside: denied, and the reason shows where it leads.",
			mk("toolu_07", "read_file", map[string]any{"path": "link-to-secret"}), "yes", runner.Blocked},
		{"An unknown tool",
			"Tools cordon has no rule for are denied by default.",
			mk("toolu_08", "deploy_to_production", map[string]any{"env": "prod"}), "yes", runner.Blocked},
		{"A handler that fails",
			"Allowed, but the file does not exist: the failure is reported to the agent and the session goes on.",
			mk("toolu_09", "read_file", map[string]any{"path": "missing.txt"}), "", runner.Failed},
		{"A shell command confined by the kernel",
			"Approved, and run in the sandbox: the write inside the workspace works, the write outside fails.",
			mk("toolu_10", "bash", map[string]any{"command": "echo hello > hello.txt && cat hello.txt && echo pwned > " +
				filepath.Join(outside, "escaped.txt")}), "yes", runner.Failed},
	}
}
