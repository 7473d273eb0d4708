// Package permission decides a tool call before it runs: ALLOW, ASK or
// DENY, with the stable id of the rule that decided and a reason that names
// the path, command word or tool at fault.
//
// # Rules
//
// First match wins:
//
//	guard.cross_agent            DENY  another agent's directory under the agents root
//	guard.workspace              DENY  a write that resolves outside the workspace, or onto a
//	                                   file the workspace sandbox protects (.git/hooks, .vscode, ...)
//	request.invalid_arguments    DENY  arguments not an object, empty command, path not a string
//	bash.hard_deny               DENY  sudo, rm -rf, mkfs, dd/redirect onto a device, shutdown, unparsable
//	path.outside_workspace       DENY  a read or glob that resolves outside the workspace
//	path.read_allow              ALLOW read_file, glob (and Read, Glob, Grep, LS)
//	path.write_requires_approval ASK   write_file, edit_file (and Write, Edit, MultiEdit, NotebookEdit)
//	bash.requires_approval       ASK   any other bash command
//	default.deny                 DENY  everything else, such as unknown or MCP tools
//
// Guards run first and cannot be outranked. Arguments are checked before
// the guards read them, so in practice request.invalid_arguments is decided
// before a guard can look at a path — there is no path to guard.
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
package permission
