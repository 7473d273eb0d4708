// Package permission decides a tool call before it runs: ALLOW, ASK or
// DENY, with the stable id of the rule that decided and a reason that names
// the path, command word or tool at fault.
//
// # Rules
//
// First match wins; each id has one action:
//
//	guard.cross_agent            DENY  another agent's directory under the agents root
//	request.invalid_arguments    DENY  arguments not an object, empty command, path not a string,
//	                                   a path the agent would read otherwise than spelled (for
//	                                   Claude Code: white space at an edge, which it trims), a
//	                                   control or text-direction character in a path
//	path.outside_workspace       DENY  a path (read, write, glob prefix) that resolves outside the
//	                                   workspace, or that cannot be resolved
//	guard.protected_path         DENY  a write inside the workspace to a path the launched policy
//	                                   keeps read-only (.git/hooks, .git/config, .vscode, shell rc
//	                                   files and login loaders when HOME is in the workspace, ...),
//	                                   to any path below a directory or file named as agents' and
//	                                   editors' configuration (workspace.NestedNames: .claude, .cursor,
//	                                   .mcp.json, ...) at any depth, existing or not, or to a file with
//	                                   other hard links (one of them may be protected)
//	policy.denied                DENY  a read or write inside the workspace that the launched policy
//	                                   denies (credential stores when HOME is in the workspace), or a
//	                                   glob, grep or list whose tree holds an existing denied root
//	bash.hard_deny               DENY  sudo, rm -rf, mkfs, dd/redirect onto a device, shutdown, unparsable
//	path.read_allow              ALLOW read_file, glob (and Read, Glob, Grep, LS)
//	path.write_requires_approval ASK   write_file, edit_file (and Write, Edit, MultiEdit, NotebookEdit)
//	bash.sandboxed               ALLOW any other shell command, when it runs inside cordon's sandbox (Config.ShellSandboxed)
//	bash.requires_approval       ASK   any other bash command (Bash, and Claude Code's Monitor)
//	default.deny                 DENY  everything else, such as unknown or MCP tools
//
// The guards cannot be outranked. Arguments are checked before the
// guards read them, so in practice request.invalid_arguments is decided
// before a guard can look at a path — there is no path to guard.
//
// # One model for both layers
//
// File tools run in the agent's own process, outside the sandbox, so the
// decider answers from the policy the sandbox is launched with
// ([Config].Policy, by default what `cordon run --workspace` launches): a
// read that policy denies is never ALLOW, and a write it denies is never
// ALLOW nor ASK. Bash commands are left to the kernel, which confines them
// when they run under `cordon run`.
//
// A path is judged the way the tool will open it, in every reading that
// differs: as the agent reads the string (each agent's tools are rows of
// the tool table with that agent's spelling: Claude Code expands "~" and
// "~/" to [Config].Home, and trims, so cordon refuses what trimming would
// change); relative to [Config].Cwd; with symlinks followed and ".."
// applied after them (the kernel), and also with ".." removed first (a tool
// that cleans paths); and, where names may fold case (macOS), under the
// root it matches ignoring case. Each reading must be inside the workspace
// and allowed. What is not covered: a path swapped for a symlink between
// the decision and the tool's open, and tools that follow symlinks while
// descending (Grep, Glob and LS are assumed not to, as ripgrep does not).
//
// # Use
//
//	d, err := permission.New(permission.Config{Workspace: "/src/app"})
//	dec := d.Decide(permission.Request{ToolUseID: "t1", Name: "bash",
//		Arguments: json.RawMessage(`{"command":"sudo make install"}`)})
//	// dec.Action == "DENY", dec.RuleID == "bash.hard_deny"
//
// The Decider is built once; Decide does no parsing of configuration and
// touches the filesystem only to resolve the request's own path.
//
// # Where things are
//
// decider.go builds the Decider and its launched policy (package
// workspace's Compose); rules.go is the table above, in order; tools.go
// maps each agent's tool names to the core tools (a new agent's tools are
// a ToolSet there); the guards themselves are package guards.
package permission
