package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/claudecode"
	"github.com/cordon-sandbox/cordon/permission"
)

var hookCommand = &command{
	name: "hook", summary: "answer an agent's tool-call hook (Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor) with cordon's decision",
	help: `Answers an agent's hooks with cordon's decisions: claude-code (Claude
Code's PreToolUse and PostToolUse), codex (Codex CLI's PreToolUse and
PostToolUse), gemini (Gemini CLI's BeforeTool and AfterTool), copilot
(GitHub Copilot CLI's preToolUse and postToolUse) and cursor (Cursor's
beforeShellExecution, beforeReadFile and beforeMCPExecution). Each
agent's protocol, tools and settings: docs/agents.md.
`,
	subs: []*command{{
		name: "hook claude-code", summary: "answer Claude Code's PreToolUse hook",
		usage: "[--workspace DIR] [--allow-read P]...\n[--agents-root DIR --agent ID [--parent ID]]\n[--sandbox-bash [--allow-sandboxed]] [--audit FILE | --no-audit]",
		help:  hookHelp,
		setup: func(fs *flag.FlagSet) action {
			o := &hookOpts{}
			o.df.register(fs, "the agent's workspace `DIR` (default: $CLAUDE_PROJECT_DIR, else the payload's cwd); relative paths are taken from the payload's cwd, as Claude Code's tools take them")
			fs.BoolVar(&o.sandboxBash, "sandbox-bash", false, "rewrite allowed Bash commands to run inside 'cordon run --workspace DIR'")
			fs.BoolVar(&o.allowSandboxed, "allow-sandboxed", false, "with --sandbox-bash, allow a Bash command no rule denies (bash.sandboxed) instead of asking; needed headless ('claude -p' denies an ask)")
			pathVar(fs, &o.auditPath, "audit", "", "append decisions and PostToolUse results to the audit log `FILE`, in a directory that exists (default: cordon's own, 'cordon audit path')")
			fs.BoolVar(&o.noAudit, "no-audit", false, "keep no audit log")
			return o.run
		},
	}},
}

// hookOpts are hook claude-code's flags.
type hookOpts struct {
	df                                   decideFlags
	sandboxBash, allowSandboxed, noAudit bool
	auditPath                            string
}

const hookHelp = `A Claude Code hook. Claude Code runs it before each tool call with a JSON
payload on stdin; cordon decides the call with its rules and answers on
stdout: allow (runs without asking you), ask (Claude Code asks you) or deny
(the call is refused and the model is told why). The reason always starts
with the rule id, e.g. "cordon bash.hard_deny: bash: sudo runs commands...".

Tools: Bash and Monitor (a shell command: decided as Bash), Read, Write,
Edit, MultiEdit, NotebookEdit, Glob, Grep, LS; mcp__* and any other tool
are denied (default.deny), so list in the hook's matcher only the tools
you want cordon to decide. Paths are decided as Claude Code opens them:
"~" and "~/" are HOME, relative paths are taken from the payload's cwd,
and a path with white space at either end (which Claude Code trims) or a
control character is refused.

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
confines it; the decision (allow or ask) is unchanged. Add
--allow-sandboxed to answer allow (rule bash.sandboxed) for such a call
instead of ask, as Claude Code's own sandbox does for its Bash: driven
headless ('claude -p'), Claude Code turns every ask into a denial. What
you give up is the prompt: a sandboxed command still reads what the
workspace policy lets it read and writes the workspace without asking;
bash.hard_deny, protected paths and the path rules stay DENY.

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

A malformed payload (not a JSON object, or one of Claude Code's keys
such as tool_name in another case or given twice; other keys are
ignored), an unknown event, a bad flag or any internal error exits 2 with
the reason on stderr, which Claude Code treats as a block: cordon never
answers allow by accident. So does a call cordon cannot answer within 30
seconds ($CORDON_HOOK_TIMEOUT, a Go duration, sets another bound): Claude
Code lets a call through when its hook is killed or times out.

Example (.claude/settings.json):
  {"hooks": {"PreToolUse": [{"matcher": "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS",
     "hooks": [{"type": "command", "command": "cordon hook claude-code --sandbox-bash"}]}]}}

Try it:
  echo '{"hook_event_name":"PreToolUse","cwd":"'$PWD'","tool_name":"Bash",
         "tool_input":{"command":"sudo rm -rf /"},"tool_use_id":"t1"}' | cordon hook claude-code
`

// exitHookBlock is Claude Code's "blocking error": the call is refused
// and stderr is the reason. It is also the usage errors' status, so a hook
// misconfigured in any way blocks.
const exitHookBlock = exitUsage

func (o *hookOpts) run(_ context.Context, e *env, _ []string) int {
	defer watchHook(e, "claude-code")()
	if o.allowSandboxed && !o.sandboxBash {
		return hookFail(e, "--allow-sandboxed needs --sandbox-bash: a command is allowed because it runs inside the sandbox")
	}
	p, raw, err := claudecode.ReadPayload(e.stdin)
	if err != nil {
		return hookFail(e, "%v", err)
	}
	log, code := o.openLog(e)
	if code != exitOK {
		return code
	}
	switch p.HookEventName {
	case claudecode.PreToolUse:
		return hookPreToolUse(e, p, o.df, o.sandboxBash, o.sandboxBash && o.allowSandboxed, log)
	case claudecode.PostToolUse:
		if log != nil {
			if err := log.Append(claudecode.PostToolUse, p.ToolUseID, json.RawMessage(raw)); err != nil {
				return hookFail(e, "%v", err)
			}
		}
		return exitOK
	case "":
		return hookFail(e, "payload has no hook_event_name")
	}
	return hookFail(e, "unsupported hook event %q: register 'cordon hook claude-code' for PreToolUse and PostToolUse", p.HookEventName)
}

func hookFail(e *env, format string, a ...any) int {
	return errorf(e, exitHookBlock, format, a...)
}

func hookPreToolUse(e *env, p *claudecode.Payload, df decideFlags, sandboxBash, allowSandboxed bool, log *audit.Log) int {
	if p.ToolName == "" {
		return hookFail(e, "PreToolUse payload has no tool_name")
	}
	ws, note, err := claudecode.Workspace(df.workspace, os.Getenv("CLAUDE_PROJECT_DIR"), p.Cwd)
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
	cfg.ShellSandboxed = allowSandboxed
	d, err := permission.New(cfg)
	if err != nil {
		return hookFail(e, "%v", err)
	}
	var rw *claudecode.Rewrite
	if sandboxBash {
		rw = &claudecode.Rewrite{RunArgs: df.runArgs(d.Workspace())}
	}
	req, dec, out, err := claudecode.Answer(d, p, note, rw)
	if err != nil {
		return hookFail(e, "--sandbox-bash: %v", err)
	}
	if log != nil {
		if err := log.Append(audit.KindRequest, req.ToolUseID, req); err != nil {
			return hookFail(e, "%v", err)
		}
		if err := log.Append(audit.KindPermission, req.ToolUseID, dec); err != nil {
			return hookFail(e, "%v", err)
		}
	}
	answer, err := claudecode.Encode(out)
	if err != nil {
		return hookFail(e, "encode answer: %v", err)
	}
	fmt.Fprintf(e.stdout, "%s\n", answer)
	return exitOK
}

// hookTimeout is how long a hook call may take before it blocks the call
// itself: Claude Code lets a call through when its hook is killed or
// times out (60 s by default), so a hook that waits on something a
// sandbox holds must not be what decides.
const hookTimeout = 30 * time.Second

// exitProcess ends the process when the hook runs out of time.
var exitProcess = os.Exit

// watchHook starts the bound of one hook call ($CORDON_HOOK_TIMEOUT, else
// hookTimeout) and returns what stops it.
func watchHook(e *env, agent string) (stop func()) {
	d := hookTimeout
	if v := os.Getenv("CORDON_HOOK_TIMEOUT"); v != "" {
		if t, err := time.ParseDuration(v); err == nil && t > 0 {
			d = t
		} else {
			fmt.Fprintf(e.stderr, "cordon hook %s: CORDON_HOOK_TIMEOUT=%s is not a positive duration like 10s; the bound is %v\n", agent, v, d)
		}
	}
	t := time.AfterFunc(d, func() {
		fmt.Fprintf(e.stderr, "cordon hook %s: no decision within %v; blocking the call\n", agent, d)
		exitProcess(exitHookBlock)
	})
	return func() { t.Stop() }
}
