// Package codex speaks Codex CLI's hook protocol (PreToolUse and
// PostToolUse command hooks, from [hooks] in config.toml or hooks.json):
// the payload Codex writes on stdin and the answer it reads on stdout.
//
// Codex names its shell tools Bash in hooks, with {"command": ...}, and
// its file edits apply_patch, with the patch text in tool_input.command:
// every file a patch adds, updates, deletes or moves to is decided as a
// write (docs/agents.md).
package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/agents/hookcall"
	"github.com/cordon-sandbox/cordon/internal/blank"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/permission"
)

// The events cordon answers.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// payload is the part of Codex's hook input cordon reads (its schema
// pre-tool-use.command.input).
type payload struct {
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
}

// Parse reads Codex's payload.
func Parse(raw []byte) (*hookcall.Call, error) {
	var p payload
	if err := strictjson.Decode(raw, &p, strictjson.Options{IgnoreUnknown: true}); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	c := &hookcall.Call{Event: p.HookEventName, Cwd: p.Cwd, ToolUseID: p.ToolUseID, Tool: p.ToolName}
	switch p.HookEventName {
	case PostToolUse:
		return c, nil
	case PreToolUse:
		c.Decide = true
	case "":
		return nil, fmt.Errorf("payload has no hook_event_name")
	default:
		return nil, fmt.Errorf("unsupported hook event %q: register 'cordon hook codex' for PreToolUse and PostToolUse", p.HookEventName)
	}
	if p.ToolName == "" {
		return nil, fmt.Errorf("PreToolUse payload has no tool_name")
	}
	switch p.ToolName {
	case "Bash":
		in, err := hookcall.Object(p.ToolName, p.ToolInput)
		if err != nil {
			return nil, err
		}
		c.Input, c.ShellKey = in, "command"
		c.Requests = []permission.Request{{ToolUseID: p.ToolUseID, Name: "Bash", Arguments: p.ToolInput}}
	case "apply_patch":
		patch, err := patchText(p.ToolInput)
		if err != nil {
			return nil, err
		}
		for _, path := range PatchPaths(patch) {
			args, _ := json.Marshal(map[string]string{"path": path})
			c.Requests = append(c.Requests, permission.Request{ToolUseID: p.ToolUseID, Name: "apply_patch_file", Arguments: args})
		}
	default:
		// MCP tools (mcp__server__tool) and anything else: no rule
		// allows them (default.deny).
		c.Requests = []permission.Request{{ToolUseID: p.ToolUseID, Name: p.ToolName, Arguments: p.ToolInput}}
	}
	return c, nil
}

// patchText is apply_patch's patch: tool_input.command, or tool_input
// itself when Codex passes the freeform text.
func patchText(in json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(in, &s) == nil {
		return s, nil
	}
	var obj struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(in, &obj); err != nil || obj.Command == nil {
		return "", fmt.Errorf("apply_patch: tool_input has no patch text in \"command\"")
	}
	return *obj.Command, nil
}

// The headers of Codex's patch format that name a file.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// PatchPaths lists the files a patch touches, each as Codex reads it
// (codex-rs/apply-patch, parser.rs): the patch is cut into lines at "\n"
// (a "\r" before it dropped), and a hunk's header line is trimmed with
// Rust's str::trim, every Unicode white space, before its marker is
// matched; the path keeps any white space after the marker, for the
// decider to refuse. A "*** Move to: " line Codex matches untrimmed, so
// its path is also taken as written, white space at its end included.
// Every line is read as a possible header, not only where Codex looks
// for one: a path too many is decided, never one too few.
func PatchPaths(patch string) []string {
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSuffix(line, "\r")
		t := blank.TrimRust(line)
		for _, h := range patchHeaders {
			if rest, ok := strings.CutPrefix(t, h); ok {
				paths = append(paths, rest)
			}
		}
		if rest, ok := strings.CutPrefix(line, "*** Move to: "); ok && rest != blank.TrimRust(rest) {
			paths = append(paths, rest)
		}
	}
	return paths
}

// output is Codex's PreToolUse answer (pre-tool-use.command.output).
type output struct {
	SystemMessage      string    `json:"systemMessage,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
}

type specific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// Answer is the answer to c. Codex acts on deny (with a reason) and on
// allow with updatedInput (the rewritten shell call, updated); it refuses
// a bare allow and any ask as unsupported, and runs the call anyway under
// its own approval policy. So an ALLOW without a rewrite prints nothing,
// and an ASK a systemMessage that Codex shows the user as a warning: the
// call then goes to Codex's own approval (approval_policy).
func Answer(c *hookcall.Call, dec permission.Decision, updated json.RawMessage) ([]byte, error) {
	switch {
	case dec.Action == permission.Deny:
		return hookcall.Marshal(output{HookSpecificOutput: &specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: hookcall.Reason(dec)}})
	case updated != nil:
		return hookcall.Marshal(output{HookSpecificOutput: &specific{HookEventName: PreToolUse, PermissionDecision: "allow",
			PermissionDecisionReason: hookcall.Reason(dec) + "; rewritten to run inside cordon's sandbox", UpdatedInput: updated}})
	case dec.Action == permission.Ask:
		return hookcall.Marshal(output{SystemMessage: hookcall.Reason(dec) + " (Codex's approval policy decides)"})
	}
	return nil, nil
}
