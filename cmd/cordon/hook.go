package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/guards"
	"github.com/cordon-sandbox/cordon/permission"
	"github.com/cordon-sandbox/cordon/policy"
)

var hookCommand = &command{
	name: "hook", summary: "answer Claude Code's PreToolUse hook with cordon's decision",
	help: `Answers an agent's hooks with cordon's decisions. One agent so far:
claude-code (Claude Code's PreToolUse and PostToolUse hooks).
`,
	subs: []*command{{
		name: "hook claude-code", summary: "answer Claude Code's PreToolUse hook",
		usage: "[--workspace DIR] [--allow-read P]...\n[--agents-root DIR --agent ID [--parent ID]]\n[--sandbox-bash] [--audit FILE | --no-audit]",
		help:  hookHelp,
		setup: func(fs *flag.FlagSet) action {
			o := &hookOpts{}
			o.df.register(fs)
			fs.BoolVar(&o.sandboxBash, "sandbox-bash", false, "rewrite allowed Bash commands to run inside 'cordon run --workspace DIR'")
			fs.StringVar(&o.auditPath, "audit", "", "append decisions and PostToolUse results to the audit log `FILE` (default: cordon's own, 'cordon audit path')")
			fs.BoolVar(&o.noAudit, "no-audit", false, "keep no audit log")
			return o.run
		},
	}},
}

// hookOpts are hook claude-code's flags.
type hookOpts struct {
	df                   decideFlags
	sandboxBash, noAudit bool
	auditPath            string
}

const hookHelp = `A Claude Code hook. Claude Code runs it before each tool call with a JSON
payload on stdin; cordon decides the call with its rules and answers on
stdout: allow (runs without asking you), ask (Claude Code asks you) or deny
(the call is refused and the model is told why). The reason always starts
with the rule id, e.g. "cordon bash.hard_deny: bash: sudo runs commands...".

Tools: Bash, Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, LS;
mcp__* and any other tool are denied (default.deny), so list in the hook's
matcher only the tools you want cordon to decide.

cordon only answers; Claude Code does the file I/O afterwards. An answer is
about the path as it is at that instant: if a directory on the path is
swapped for a symlink between the answer and the I/O, Claude Code follows
it, so "a symlink pointing out is refused" holds at the instant of the
answer only. A sandboxed command left running in the background can make
that swap to race Claude Code's own Read, Write and Edit. Treat the answer
as advice; what the kernel holds is the sandbox around Bash (--sandbox-bash):
the commands themselves cannot write outside the workspace or read a denied
file. cordon's own runner ('cordon demo', the Go API) does the file I/O
itself and never follows a link at open time.

With --sandbox-bash, a Bash call that is not denied comes back with its
command rewritten to run inside 'cordon run --workspace DIR', so the kernel
confines it; the decision (allow or ask) is unchanged.

Every PreToolUse request and decision, and every PostToolUse result, is
appended to a keyed, hash-chained audit log: by default cordon's own (see
'cordon audit path'; no sandbox can reach it), or --audit FILE, which is then
read-only (with FILE.head) in the sandbox --sandbox-bash wraps commands in.
Register the hook for PostToolUse too for the results; check the log with
'cordon audit verify [FILE]'. --no-audit keeps no log.

The workspace is --workspace, else $CLAUDE_PROJECT_DIR (the project root
Claude Code names), else the payload's cwd; one inside .git is cut back to
the work tree that holds it. Relative paths are taken from the payload's
cwd, as Claude Code's tools take them; a cwd outside the workspace, inside
.git or protected is named in the reason.

Decisions follow the policy 'cordon run --workspace DIR' launches with the
same flags (see 'cordon profile --workspace DIR'), because Read, Write,
Edit, Grep, Glob and LS run outside the sandbox: what it denies (~/.ssh
when Claude Code runs in ~, say) is never allowed, and what it keeps
read-only is never written. --sandbox-bash launches with those flags.

A malformed payload, an unknown event, a bad flag or any internal error
exits 2 with the reason on stderr, which Claude Code treats as a block:
cordon never answers allow by accident.

Example (.claude/settings.json):
  {"hooks": {"PreToolUse": [{"matcher": "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS",
     "hooks": [{"type": "command", "command": "cordon hook claude-code --sandbox-bash"}]}]}}

Try it:
  echo '{"hook_event_name":"PreToolUse","cwd":"'$PWD'","tool_name":"Bash",
         "tool_input":{"command":"sudo rm -rf /"},"tool_use_id":"t1"}' | cordon hook claude-code
`

// hookPayload is what Claude Code sends on stdin.
type hookPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID      string          `json:"tool_use_id"`
}

type hookOutput struct {
	HookSpecificOutput hookDecision `json:"hookSpecificOutput"`
}

type hookDecision struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// exitHookBlock is Claude Code's "blocking error": the call is refused
// and stderr is the reason. It is also the usage errors' status, so a hook
// misconfigured in any way blocks.
const exitHookBlock = exitUsage

func (o *hookOpts) run(_ context.Context, e *env, _ []string) int {
	data, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		return hookFail(e, "read payload: %v", err)
	}
	var p hookPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return hookFail(e, "payload is not a JSON object: %v", err)
	}
	var log *audit.Log
	if !o.noAudit {
		if log, err = audit.OpenUser(o.auditPath, hookLogName); err != nil {
			return hookFail(e, "%v (--no-audit runs without a log)", err)
		}
		if o.auditPath != "" {
			o.df.auditLog = log.Path()
		}
	} else if o.auditPath != "" {
		return hookFail(e, "--audit and --no-audit contradict each other")
	}
	switch p.HookEventName {
	case "PreToolUse":
		return hookPreToolUse(e, &p, o.df, o.sandboxBash, log)
	case "PostToolUse":
		if log != nil {
			if err := log.Append("PostToolUse", p.ToolUseID, json.RawMessage(data)); err != nil {
				return hookFail(e, "%v", err)
			}
		}
		return exitOK
	case "":
		return hookFail(e, "payload has no hook_event_name")
	}
	return hookFail(e, "unsupported hook event %q: register 'cordon hook claude-code' for PreToolUse (and PostToolUse with --audit)", p.HookEventName)
}

func hookFail(e *env, format string, a ...any) int {
	return errorf(e, exitHookBlock, format, a...)
}

func hookPreToolUse(e *env, p *hookPayload, df decideFlags, sandboxBash bool, log *audit.Log) int {
	if p.ToolName == "" {
		return hookFail(e, "PreToolUse payload has no tool_name")
	}
	ws, note, err := hookWorkspace(df.workspace, os.Getenv("CLAUDE_PROJECT_DIR"), p.Cwd)
	if err != nil {
		return hookFail(e, "%v", err)
	}
	df.workspace = ws
	if log != nil {
		// The audit log and its anchor are read-only to the sandbox and,
		// the same policy, to the file tools.
		df.readonly = append(df.readonly, log.Protect()...)
	}
	cfg, err := df.config(p.Cwd)
	if err != nil {
		return hookFail(e, "%v", err)
	}
	d, err := permission.New(cfg)
	if err != nil {
		return hookFail(e, "%v", err)
	}
	req := permission.Request{ToolUseID: p.ToolUseID, Name: p.ToolName, Arguments: p.ToolInput}
	dec := d.Decide(req)
	out := hookDecision{
		HookEventName:            "PreToolUse",
		PermissionDecision:       strings.ToLower(string(dec.Action)),
		PermissionDecisionReason: fmt.Sprintf("cordon %s: %s", dec.RuleID, dec.Reason),
	}
	if note == "" {
		note = cwdNote(d, p.Cwd)
	}
	if note != "" {
		out.PermissionDecisionReason += " [" + note + "]"
	}
	if sandboxBash && dec.Action != permission.Deny {
		if core, _ := permission.CoreName(p.ToolName); core == permission.ToolBash {
			updated, err := sandboxedInput(p.ToolInput, df.runArgs(d.Workspace()))
			if err != nil {
				return hookFail(e, "--sandbox-bash: %v", err)
			}
			out.UpdatedInput = updated
			out.PermissionDecisionReason += "; rewritten to run inside cordon's sandbox"
		}
	}
	if log != nil {
		if err := log.Append(audit.KindRequest, req.ToolUseID, req); err != nil {
			return hookFail(e, "%v", err)
		}
		if err := log.Append(audit.KindPermission, req.ToolUseID, dec); err != nil {
			return hookFail(e, "%v", err)
		}
	}
	answer, err := marshalPlain(hookOutput{HookSpecificOutput: out})
	if err != nil {
		return hookFail(e, "encode answer: %v", err)
	}
	fmt.Fprintf(e.stdout, "%s\n", answer)
	return exitOK
}

// hookWorkspace picks the workspace: --workspace, else the project root
// Claude Code names ($CLAUDE_PROJECT_DIR), else the payload's cwd. The cwd
// is the session's current directory, which the agent moves with cd, so it
// is the workspace only when nothing else names one. Neither it nor the
// project root is ever a directory inside .git: it is cut back to the work
// tree that holds .git, and note says so. A cwd inside another protected
// name (.claude, .vscode, ...) is refused when nothing else names the
// project, and so is a cwd that is not an absolute path.
func hookWorkspace(flagDir, projectDir, cwd string) (ws, note string, err error) {
	if cwd != "" && (!filepath.IsAbs(cwd) || strings.IndexByte(cwd, 0) >= 0) {
		return "", "", fmt.Errorf("payload cwd %q is not an absolute path", cwd)
	}
	dir, from := cwd, "payload cwd"
	switch {
	case flagDir != "":
		return flagDir, "", nil // the user's explicit choice, as for 'cordon run'
	case projectDir != "":
		dir, from = projectDir, "CLAUDE_PROJECT_DIR"
	case cwd == "":
		return "", "", errors.New("no workspace: pass --workspace DIR, or run from Claude Code (CLAUDE_PROJECT_DIR, payload cwd)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("%s %q: %w", from, dir, err)
	}
	real, err := guards.Realpath(abs)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", from, err)
	}
	top, name := belowProtectedName(real)
	switch {
	case name == ".git":
		// A workspace inside .git would leave that repository's hooks
		// and config writable (protections apply below a workspace); the
		// work tree that holds it is the project.
		return top, fmt.Sprintf("workspace %s: %s %s is inside .git, which is never a workspace", top, from, dir), nil
	case name != "" && from == "payload cwd":
		// Cutting back could widen the workspace far beyond the project
		// (a project under ~/.vscode would become HOME): refuse instead.
		return "", "", fmt.Errorf("payload cwd %s is inside %s, which is never a workspace, and no project root is named: pass --workspace DIR or set CLAUDE_PROJECT_DIR", dir, name)
	}
	return dir, "", nil
}

// belowProtectedName returns the directory above the first component of
// p that is .git or an auto-executed name, and that name.
func belowProtectedName(p string) (top, name string) {
	protected := map[string]bool{".git": true}
	for _, n := range policy.AutoExecNames {
		protected[n] = true
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if protected[c] && i > 0 {
			top = strings.Join(parts[:i], "/")
			if top == "" {
				top = "/"
			}
			return top, c
		}
	}
	return "", ""
}

// cwdNote says why the payload's cwd is not the workspace when it is not
// a place the agent may work in: outside the workspace, inside .git, or
// protected. Relative paths are still taken from it, since Claude Code's
// tools take them from there; the rules then refuse what leaves the
// workspace or touches what is protected.
func cwdNote(d *permission.Decider, cwd string) string {
	if cwd == "" {
		return ""
	}
	real, err := guards.Realpath(cwd)
	if err != nil {
		return fmt.Sprintf("workspace %s: payload cwd %s cannot be resolved (%v)", d.Workspace(), cwd, err)
	}
	ws := d.Workspace()
	switch {
	case !guards.Within(ws, real):
		return fmt.Sprintf("workspace %s: payload cwd %s is outside it", ws, cwd)
	case real == ws:
		return ""
	}
	if _, name := belowProtectedName(strings.TrimPrefix(real, ws)); name != "" {
		return fmt.Sprintf("workspace %s: payload cwd %s is inside %s", ws, cwd, name)
	}
	if v := d.Policy().Explain(real); !v.Write {
		return fmt.Sprintf("workspace %s: payload cwd %s is protected (%s)", ws, cwd, v.Reason)
	}
	return ""
}

// sandboxedInput returns tool_input with its command wrapped in
// 'cordon run RUNARGS', every other field kept as it was.
func sandboxedInput(input json.RawMessage, runArgs []runArg) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return nil, fmt.Errorf("tool_input is not an object: %w", err)
	}
	var command string
	if err := json.Unmarshal(fields["command"], &command); err != nil {
		return nil, fmt.Errorf("tool_input.command is not a string: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the cordon executable: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if fields["command"], err = marshalPlain(sandboxCommand(exe, runArgs, command)); err != nil {
		return nil, err
	}
	return marshalPlain(fields)
}

// marshalPlain is json.Marshal without HTML escaping: the output is read
// by people (and shells), and > or & are common in commands.
func marshalPlain(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// sandboxCommand is the shell command that runs command under cordon. The
// original goes to the shell as one single-quoted word, so quotes, $,
// backticks, newlines and heredocs reach the inner shell untouched. The
// inner shell is bash when the host has it, because Claude Code's Bash tool
// speaks bash ([[ ]], arrays, brace expansion), and /bin/sh otherwise.
func sandboxCommand(exe string, runArgs []runArg, command string) string {
	shell := "/bin/sh"
	if fi, err := os.Stat("/bin/bash"); err == nil && fi.Mode().IsRegular() {
		shell = "/bin/bash"
	}
	words := []string{singleQuote(exe), "run", "--no-tty"}
	for _, a := range runArgs {
		words = append(words, a.flag, singleQuote(a.value))
	}
	words = append(words, "--", shell, "-c", singleQuote(command))
	return strings.Join(words, " ")
}

// singleQuote wraps s in single quotes. A quote inside is written as
// quote, backslash, quote, quote: close, an escaped quote, reopen; it is the
// one character single quotes cannot hold.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
