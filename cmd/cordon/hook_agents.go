package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/cordon-sandbox/cordon/agents/codex"
	"github.com/cordon-sandbox/cordon/agents/copilot"
	"github.com/cordon-sandbox/cordon/agents/cursor"
	"github.com/cordon-sandbox/cordon/agents/gemini"
	"github.com/cordon-sandbox/cordon/agents/hookcall"
	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/claudecode"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/permission"
)

// hookAgent is one agent's adapter as 'cordon hook AGENT' drives it.
type hookAgent struct {
	name  string
	tools permission.ToolSet
	// projectEnv names the variable in which the agent names the project
	// root for its hooks, "" for none.
	projectEnv string
	// rewrites: the agent lets a hook rewrite a shell call.
	rewrites bool
	parse    func([]byte) (*hookcall.Call, error)
	answer   func(*hookcall.Call, permission.Decision, json.RawMessage) ([]byte, error)
	example  string
}

var hookAgents = []hookAgent{
	{name: "codex", tools: permission.ToolsCodex, rewrites: true, parse: codex.Parse, answer: codex.Answer,
		example: `~/.codex/config.toml:
  [[hooks.PreToolUse]]
  matcher = "^(Bash|apply_patch)$"
  [[hooks.PreToolUse.hooks]]
  type = "command"
  command = "cordon hook codex --sandbox-bash"
  timeout = 60`},
	{name: "gemini", tools: permission.ToolsGemini, projectEnv: "GEMINI_PROJECT_DIR", rewrites: true, parse: gemini.Parse, answer: gemini.Answer,
		example: `.gemini/settings.json:
  {"hooks": {"BeforeTool": [{"matcher": "run_shell_command|read_file|write_file|replace|list_directory|glob|grep_search|read_many_files",
     "hooks": [{"type": "command", "command": "cordon hook gemini --sandbox-bash", "timeout": 60000}]}]}}`},
	{name: "copilot", tools: permission.ToolsCopilot, projectEnv: "COPILOT_PROJECT_DIR", rewrites: true, parse: copilot.Parse, answer: copilot.Answer,
		example: `~/.copilot/hooks/cordon.json (repository hooks do not load in 'copilot -p' by default):
  {"version": 1, "hooks": {"preToolUse": [{"type": "command", "matcher": "bash|view|create|edit|str_replace_editor|glob|grep",
     "bash": "cordon hook copilot --sandbox-bash", "timeoutSec": 60}]}}`},
	{name: "cursor", tools: permission.ToolsCursor, parse: cursor.Parse, answer: cursor.Answer,
		example: `.cursor/hooks.json:
  {"version": 1, "hooks": {
     "beforeShellExecution": [{"command": "cordon hook cursor", "failClosed": true}],
     "beforeReadFile": [{"command": "cordon hook cursor", "failClosed": true}],
     "beforeMCPExecution": [{"command": "cordon hook cursor", "failClosed": true}]}}`},
}

// agentHookCommand is 'cordon hook AGENT' for one of hookAgents.
func agentHookCommand(a hookAgent) *command {
	usage := "[--workspace DIR] [--allow-read P]...\n[--agents-root DIR --agent ID [--parent ID]]\n[--sandbox-bash [--allow-sandboxed]] [--audit FILE | --no-audit]"
	if !a.rewrites {
		usage = "[--workspace DIR] [--allow-read P]...\n[--agents-root DIR --agent ID [--parent ID]]\n[--audit FILE | --no-audit]"
	}
	return &command{
		name: "hook " + a.name, summary: "answer " + a.name + "'s hooks",
		usage: usage,
		help: fmt.Sprintf(`A hook for %s: it reads the agent's payload on stdin, decides the call
with cordon's rules (the tool set and path reading of %s, see
docs/agents.md) and answers in the agent's format. A malformed payload,
an unknown event, a bad flag or any internal error exits 2 with the
reason on stderr, which the agent takes as a block, and so does a call
not answered within 30 seconds ($CORDON_HOOK_TIMEOUT).

Example (%s)
`, a.name, a.name, a.example),
		setup: func(fs *flag.FlagSet) action {
			o := &hookOpts{}
			o.df.register(fs, "the agent's workspace `DIR` (default: the project root the agent names, else the payload's cwd)")
			fs.BoolVar(&o.sandboxBash, "sandbox-bash", false, "rewrite shell commands that are not denied to run inside 'cordon run --workspace DIR'")
			fs.BoolVar(&o.allowSandboxed, "allow-sandboxed", false, "with --sandbox-bash, allow a shell command no rule denies (bash.sandboxed) instead of asking")
			pathVar(fs, &o.auditPath, "audit", "", "append decisions to the audit log `FILE` (default: cordon's own, 'cordon audit path')")
			fs.BoolVar(&o.noAudit, "no-audit", false, "keep no audit log")
			return func(ctx context.Context, e *env, args []string) int { return o.runAgent(e, a) }
		},
	}
}

func init() {
	for _, a := range hookAgents {
		hookCommand.subs = append(hookCommand.subs, agentHookCommand(a))
	}
}

// runAgent answers one hook call of agent a.
func (o *hookOpts) runAgent(e *env, a hookAgent) int {
	defer watchHook(e, a.name)()
	fail := func(format string, args ...any) int {
		return errorf(e, exitHookBlock, format, args...)
	}
	if o.sandboxBash && !a.rewrites {
		return fail("--sandbox-bash: %s's hooks cannot rewrite a shell command; run %s itself inside 'cordon run' instead", a.name, a.name)
	}
	if o.allowSandboxed && !o.sandboxBash {
		return fail("--allow-sandboxed needs --sandbox-bash: a command is allowed because it runs inside the sandbox")
	}
	raw, err := hookcall.Read(e.stdin)
	if err != nil {
		return fail("%v", err)
	}
	c, err := a.parse(raw)
	if err != nil {
		return fail("%v", err)
	}
	log, code := o.openLog(e)
	if code != exitOK {
		return code
	}
	if !c.Decide {
		if log != nil {
			if err := log.Append(c.Event, c.ToolUseID, json.RawMessage(raw)); err != nil {
				return fail("%v", err)
			}
		}
		return exitOK
	}
	df, d, note, err := o.decider(a, c, log)
	if err != nil {
		return fail("%v", err)
	}
	dec, _ := hookcall.Decide(d, c)
	if note != "" {
		dec.Reason += " [" + note + "]"
	}
	var updated json.RawMessage
	if command, ok := c.Command(); ok && o.sandboxBash && dec.Action != permission.Deny {
		if updated, err = sandboxed(c, command, df.runArgs(d.Workspace())); err != nil {
			return fail("--sandbox-bash: %v", err)
		}
	}
	if err := recordCall(log, c, dec); err != nil {
		return fail("%v", err)
	}
	out, err := a.answer(c, dec, updated)
	if err != nil {
		return fail("encode answer: %v", err)
	}
	if out != nil {
		fmt.Fprintf(e.stdout, "%s\n", out)
	}
	return exitOK
}

// decider is the decider for call c of agent a: the flags' workspace as
// the call's project and working directory settle it (note says how),
// the audit log protected.
func (o *hookOpts) decider(a hookAgent, c *hookcall.Call, log *audit.Log) (decideFlags, *permission.Decider, string, error) {
	df := o.df
	projectDir := c.ProjectDir
	if a.projectEnv != "" && os.Getenv(a.projectEnv) != "" {
		projectDir = os.Getenv(a.projectEnv)
	}
	ws, note, err := claudecode.Workspace(df.workspace, projectDir, c.Cwd)
	if err != nil {
		return df, nil, "", err
	}
	df.workspace = ws
	if log != nil {
		df.readonly = append(df.readonly, log.Protect()...)
	}
	cfg, err := df.config(c.Cwd)
	if err != nil {
		return df, nil, "", err
	}
	cfg.Tools = a.tools
	cfg.ShellSandboxed = o.sandboxBash && o.allowSandboxed
	d, err := permission.New(cfg)
	return df, d, note, err
}

// sandboxed is call c with its shell command wrapped to run in 'cordon
// run' with runArgs (--sandbox-bash).
func sandboxed(c *hookcall.Call, command string, runArgs []claudecode.RunArg) (json.RawMessage, error) {
	rw := &claudecode.Rewrite{RunArgs: runArgs}
	wrapped, err := rw.Wrap(command)
	if err != nil {
		return nil, err
	}
	return c.WithCommand(wrapped)
}

// recordCall appends call c's requests and decision dec to log, when
// there is one.
func recordCall(log *audit.Log, c *hookcall.Call, dec permission.Decision) error {
	if log == nil {
		return nil
	}
	for _, r := range c.Requests {
		r.ToolUseID = c.ToolUseID
		if err := log.Append(audit.KindRequest, c.ToolUseID, r); err != nil {
			return err
		}
	}
	return log.Append(audit.KindPermission, c.ToolUseID, dec)
}

// openLog opens the audit log the flags name, or none with --no-audit.
func (o *hookOpts) openLog(e *env) (*audit.Log, int) {
	if o.noAudit {
		if o.auditPath != "" {
			return nil, hookFail(e, "--audit and --no-audit contradict each other")
		}
		return nil, exitOK
	}
	log, err := audit.OpenUser(o.auditPath, hookLogName)
	if err == nil {
		err = log.Check()
	}
	if err != nil && o.auditPath == "" {
		// Inside a cordon sandbox (an agent run with 'cordon run --agent'
		// and the hook 'cordon init' installed), cordon's state directory
		// is denied, so the default log cannot be kept there: the hook
		// still decides, without a log, rather than refuse every call.
		// A log named with --audit is kept or the call refused.
		if _, in := detect.Nested(); in {
			return nil, exitOK
		}
	}
	if err != nil {
		return nil, hookFail(e, "%v (--no-audit runs without a log)", err)
	}
	if o.auditPath != "" {
		o.df.auditLog = log.Path()
	}
	return log, exitOK
}
