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
	"github.com/cordon-sandbox/cordon/permission"
)

func init() {
	register("hook", "answer Claude Code's PreToolUse hook with cordon's decision", cmdHook)
}

const hookHelp = `Usage: cordon hook claude-code [--workspace DIR] [--agents-root DIR --agent ID [--parent ID]]
                              [--sandbox-bash] [--audit FILE | --no-audit]

A Claude Code hook. Claude Code runs it before each tool call with a JSON
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

The workspace is --workspace, else the payload's cwd, else
$CLAUDE_PROJECT_DIR. A malformed payload, an unknown event or any internal
error exits 2 with the reason on stderr, which Claude Code treats as a block:
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

// exitHookBlock is Claude Code's "blocking error": the call is refused and
// stderr is the reason.
const exitHookBlock = 2

func cmdHook(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var df decideFlags
	df.register(fs)
	sandboxBash := fs.Bool("sandbox-bash", false, "rewrite allowed Bash commands to run inside 'cordon run --workspace DIR'")
	auditPath := fs.String("audit", "", "append decisions and PostToolUse results to the audit log `FILE` (default: cordon's own, 'cordon audit path')")
	noAudit := fs.Bool("no-audit", false, "keep no audit log")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, hookHelp, "Flags:\n")
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "claude-code" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fs.Usage()
			return exitOK
		}
		fmt.Fprint(e.stderr, "cordon hook: name the agent: cordon hook claude-code [FLAGS]\n")
		return exitHookBlock // a hook misconfigured this way must still block
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitHookBlock
	}
	if fs.NArg() > 0 {
		return hookFail(e, "unexpected argument %q", fs.Arg(0))
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		return hookFail(e, "read payload: %v", err)
	}
	var p hookPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return hookFail(e, "payload is not a JSON object: %v", err)
	}
	var log *audit.Log
	if !*noAudit {
		if log, err = audit.OpenUser(*auditPath, hookLogName); err != nil {
			return hookFail(e, "%v (--no-audit runs without a log)", err)
		}
	} else if *auditPath != "" {
		return hookFail(e, "--audit and --no-audit contradict each other")
	}
	switch p.HookEventName {
	case "PreToolUse":
		return hookPreToolUse(e, &p, df, *sandboxBash, log)
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
	fmt.Fprintf(e.stderr, "cordon hook claude-code: %s\n", fmt.Sprintf(format, a...))
	return exitHookBlock
}

func hookPreToolUse(e *env, p *hookPayload, df decideFlags, sandboxBash bool, log *audit.Log) int {
	if p.ToolName == "" {
		return hookFail(e, "PreToolUse payload has no tool_name")
	}
	if df.workspace == "" {
		df.workspace = p.Cwd
	}
	if df.workspace == "" {
		df.workspace = os.Getenv("CLAUDE_PROJECT_DIR")
	}
	if df.workspace == "" {
		return hookFail(e, "no workspace: pass --workspace DIR, or run from Claude Code (payload cwd, CLAUDE_PROJECT_DIR)")
	}
	d, err := permission.New(df.config())
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
	if sandboxBash && dec.Action != permission.Deny {
		if core, _ := permission.CoreName(p.ToolName); core == permission.ToolBash {
			var protect []string
			if log != nil {
				protect = log.Protect()
			}
			updated, err := sandboxedInput(p.ToolInput, d.Workspace(), protect)
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

// sandboxedInput returns tool_input with its command wrapped in
// 'cordon run --workspace DIR', every other field kept as it was; protect
// (the audit log and its anchor) is made read-only in that sandbox.
func sandboxedInput(input json.RawMessage, workspace string, protect []string) (json.RawMessage, error) {
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
	if fields["command"], err = marshalPlain(sandboxCommand(exe, workspace, command, protect)); err != nil {
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
func sandboxCommand(exe, workspace, command string, protect []string) string {
	shell := "/bin/sh"
	if fi, err := os.Stat("/bin/bash"); err == nil && fi.Mode().IsRegular() {
		shell = "/bin/bash"
	}
	argv := []string{singleQuote(exe), "run", "--no-tty", "--workspace", singleQuote(workspace)}
	for _, p := range protect {
		argv = append(argv, "--readonly", singleQuote(p))
	}
	return strings.Join(append(argv, "--", shell, "-c", singleQuote(command)), " ")
}

// singleQuote wraps s in single quotes. A quote inside is written as
// quote, backslash, quote, quote: close, an escaped quote, reopen; it is the
// one character single quotes cannot hold.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
