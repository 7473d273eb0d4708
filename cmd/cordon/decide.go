package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/claudecode"
	"github.com/cordon-sandbox/cordon/permission"
)

var decideCommand = &command{
	name: "decide", summary: "decide one tool call (JSON on stdin) and print the decision",
	usage: "--workspace DIR [--allow-read P]... [--agents-root DIR --agent ID [--parent ID]]\n< request.json",
	help:  decideHelp,
	setup: func(fs *flag.FlagSet) action {
		df := &decideFlags{}
		df.register(fs, "the agent's workspace `DIR`; relative paths in the request are taken from it")
		return df.decide
	},
}

const decideHelp = `Reads one tool call as JSON on stdin and prints the decision as JSON:
ALLOW, ASK or DENY, the id of the rule that decided and why. Nothing is
run and nobody is asked; this is the rule pipeline on its own.

File tools run outside the sandbox, so the decision follows the policy
'cordon run' launches with the same flags (see 'cordon profile
--workspace DIR'): what that policy denies is never ALLOW, and a write it
denies is never ASK.

Request:  {"tool_use_id": "t1", "name": "bash", "arguments": {"command": "ls -la"}}
          (exactly these keys, spelled so, each once)
Decision: {"tool_use_id": "t1", "action": "ASK", "rule_id": "bash.requires_approval", "reason": "..."}

Tools: bash{command} read_file{path} write_file{path,content} edit_file{path,...}
glob{pattern}, and Claude Code's Bash, Monitor, Read, Write, Edit, MultiEdit,
NotebookEdit, Glob, Grep, LS with their own argument names, their paths
read as Claude Code reads them (~ and ~/ are $HOME; white space at either
end, which it trims, is refused).

Rules, first match wins: guard.cross_agent, request.invalid_arguments,
path.outside_workspace, guard.protected_path, policy.denied,
bash.hard_deny, path.read_allow, path.write_requires_approval,
bash.sandboxed (with --allow-sandboxed), bash.requires_approval, default.deny.

Examples:
  echo '{"tool_use_id":"1","name":"bash","arguments":{"command":"sudo make install"}}' \
    | cordon decide --workspace .
  echo '{"tool_use_id":"2","name":"read_file","arguments":{"path":"../.ssh/id_rsa"}}' \
    | cordon decide --workspace .
  echo '{"tool_use_id":"3","name":"glob","arguments":{"pattern":"../b/**"}}' \
    | cordon decide --workspace /agents/a --agents-root /agents --agent a

Exit status: 0 when a decision was printed (whatever it says), 2 for bad
flags or arguments (the request is read from stdin), 125 for an unreadable
request or workspace.
`

// decideFlags are shared by decide and hook: the subset of run's policy
// flags that describes an agent's sandbox.
type decideFlags struct {
	workspace, agentsRoot, agent, parent string
	allowRead                            []string
	readonly                             []string // not a flag: what the hook protects (its audit log)
	auditLog                             string   // not a flag: the hook's named log, passed to 'cordon run --audit'
}

// register registers the flags; workspaceUsage is --workspace's, which
// decide and the hook take relative paths differently from.
func (f *decideFlags) register(fs *flag.FlagSet, workspaceUsage string) {
	pathVar(fs, &f.workspace, "workspace", "", workspaceUsage)
	fs.Func("allow-read", "as for run: leave credential store `PATH` readable (repeatable)", appendPath(&f.allowRead))
	pathVar(fs, &f.agentsRoot, "agents-root", "", "`DIR` holding one directory per agent; others' are off limits")
	fs.StringVar(&f.agent, "agent", "", "this agent's `ID` (its directory under --agents-root)")
	fs.StringVar(&f.parent, "parent", "", "the parent agent's `ID`, readable but not writable")
}

// config is the decider's configuration, with the policy that 'cordon run'
// builds from the same flags: one function composes both.
func (f *decideFlags) config(cwd string) (permission.Config, error) {
	pf := policyFlags{workspace: f.workspace, allowRead: f.allowRead,
		agentsRoot: f.agentsRoot, agent: f.agent, parent: f.parent}
	comp, err := pf.compose(f.readonly)
	if err != nil {
		return permission.Config{}, err
	}
	return permission.Config{Workspace: f.workspace, AgentsRoot: f.agentsRoot, Agent: f.agent, Parent: f.parent,
		Cwd: cwd, Policy: &comp.Policy}, nil
}

// runArgs are the flags of 'cordon run' that launch the policy config
// answers from.
func (f *decideFlags) runArgs(workspace string) []claudecode.RunArg {
	args := []claudecode.RunArg{{Flag: "--workspace", Value: workspace}}
	for _, p := range f.allowRead {
		args = append(args, claudecode.RunArg{Flag: "--allow-read", Value: p})
	}
	if f.auditLog != "" {
		// 'cordon run --audit' keeps the log and its anchor out of the
		// sandbox's reach as the decider's policy does (protected, never
		// a read-only carve-out in a denied root), and records the launch.
		args = append(args, claudecode.RunArg{Flag: "--audit", Value: f.auditLog})
	}
	if f.agentsRoot != "" {
		root, err := filepath.Abs(f.agentsRoot) // the command may run from another directory
		if err != nil {
			root = f.agentsRoot
		}
		args = append(args, claudecode.RunArg{Flag: "--agents-root", Value: root}, claudecode.RunArg{Flag: "--agent", Value: f.agent})
		if f.parent != "" {
			args = append(args, claudecode.RunArg{Flag: "--parent", Value: f.parent})
		}
	}
	return args
}

func (df *decideFlags) decide(_ context.Context, e *env, _ []string) int {
	if df.workspace == "" {
		return usageError(e, "--workspace DIR is required")
	}
	cfg, err := df.config("")
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	d, err := permission.New(cfg)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, 16<<20))
	if err != nil {
		return errorf(e, exitCordonError, "read stdin: %v", err)
	}
	req, err := permission.DecodeRequest(data)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	out, _ := json.Marshal(d.Decide(req))
	fmt.Fprintf(e.stdout, "%s\n", out)
	return exitOK
}
