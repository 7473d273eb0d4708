// Package copilot speaks GitHub Copilot CLI's hook protocol (preToolUse
// and postToolUse command hooks in .github/hooks/*.json or the user's
// config), in both payload formats: camelCase (toolName, toolArgs) for
// an event configured as preToolUse, snake_case (tool_name, tool_input)
// for one configured as PreToolUse.
//
// Copilot's tools: bash (a shell command), view, create, edit,
// str_replace_editor (absolute paths only), glob and grep, whose "paths"
// may be a list: each path is decided on its own.
package copilot

import (
	"encoding/json"
	"fmt"

	"github.com/cordon-sandbox/cordon/agents/hookcall"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/permission"
)

// payload holds both formats' fields; which are set says which it is.
type payload struct {
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"toolName"`
	ToolArgs      json.RawMessage `json:"toolArgs"`
	ToolResult    json.RawMessage `json:"toolResult"`
	SnakeName     string          `json:"tool_name"`
	SnakeInput    json.RawMessage `json:"tool_input"`
	SnakeResult   json.RawMessage `json:"tool_result"`
}

// Parse reads Copilot's payload.
func Parse(raw []byte) (*hookcall.Call, error) {
	var p payload
	if err := strictjson.Decode(raw, &p, strictjson.Options{IgnoreUnknown: true}); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	name, args, result, event := p.ToolName, p.ToolArgs, p.ToolResult, "preToolUse"
	switch {
	case p.ToolName != "" && p.SnakeName != "":
		return nil, fmt.Errorf("payload names its tool twice (toolName and tool_name)")
	case p.SnakeName != "" || p.HookEventName != "":
		name, args, result, event = p.SnakeName, p.SnakeInput, p.SnakeResult, p.HookEventName
	}
	c := &hookcall.Call{Event: event, Cwd: p.Cwd, Tool: name}
	switch {
	case result != nil || event == "PostToolUse" || event == "postToolUse":
		c.Event = "postToolUse"
		return c, nil
	case event != "preToolUse" && event != "PreToolUse":
		return nil, fmt.Errorf("unsupported hook event %q: register 'cordon hook copilot' for preToolUse and postToolUse", event)
	case name == "":
		return nil, fmt.Errorf("preToolUse payload has no tool name")
	}
	c.Decide = true
	// toolArgs has been a JSON string holding the arguments; read either.
	var s string
	if json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s)
	}
	switch name {
	case "bash":
		in, err := hookcall.Object(name, args)
		if err != nil {
			return nil, err
		}
		c.Input, c.ShellKey = in, "command"
	case "glob", "grep":
		in, err := hookcall.Object(name, args)
		if err != nil {
			return nil, err
		}
		var list []string
		if raw, ok := in["paths"]; ok && json.Unmarshal(raw, &list) == nil {
			for _, path := range list {
				one := make(map[string]json.RawMessage, len(in))
				for k, v := range in {
					one[k] = v
				}
				one["paths"], _ = json.Marshal(path)
				b, _ := json.Marshal(one)
				c.Requests = append(c.Requests, permission.Request{Name: name, Arguments: b})
			}
			return c, nil
		}
	}
	c.Requests = []permission.Request{{Name: name, Arguments: args}}
	return c, nil
}

// output is Copilot's preToolUse answer.
type output struct {
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	ModifiedArgs             json.RawMessage `json:"modifiedArgs,omitempty"`
}

// Answer is the answer to c: allow, ask or deny with the reason, and
// updated (the rewritten shell call) as modifiedArgs.
func Answer(c *hookcall.Call, dec permission.Decision, updated json.RawMessage) ([]byte, error) {
	out := output{PermissionDecision: "deny", PermissionDecisionReason: hookcall.Reason(dec)}
	switch dec.Action {
	case permission.Allow:
		out.PermissionDecision = "allow"
	case permission.Ask:
		out.PermissionDecision = "ask"
	}
	if updated != nil && dec.Action != permission.Deny {
		out.PermissionDecisionReason += "; rewritten to run inside cordon's sandbox"
		out.ModifiedArgs = updated
	}
	return hookcall.Marshal(out)
}
