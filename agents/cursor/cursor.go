// Package cursor speaks Cursor's hook protocol (hooks.json):
// beforeShellExecution and beforeReadFile, the events that come before
// a shell command or a file read, and beforeMCPExecution, which cordon
// denies (no rule allows an MCP tool). Cursor lets a hook allow, ask or
// deny a command but not rewrite it, so there is no --sandbox-bash here.
package cursor

import (
	"encoding/json"
	"fmt"

	"github.com/cordon-sandbox/cordon/agents/hookcall"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/permission"
)

// The events cordon answers.
const (
	BeforeShellExecution = "beforeShellExecution"
	BeforeReadFile       = "beforeReadFile"
	BeforeMCPExecution   = "beforeMCPExecution"
)

type payload struct {
	HookEventName  string   `json:"hook_event_name"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Command        *string  `json:"command"`
	Cwd            string   `json:"cwd"`
	FilePath       *string  `json:"file_path"`
	ToolName       string   `json:"tool_name"`
}

// Parse reads Cursor's payload.
func Parse(raw []byte) (*hookcall.Call, error) {
	var p payload
	if err := strictjson.Decode(raw, &p, strictjson.Options{IgnoreUnknown: true}); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	c := &hookcall.Call{Event: p.HookEventName, Decide: true, Cwd: p.Cwd}
	if len(p.WorkspaceRoots) > 0 {
		c.ProjectDir = p.WorkspaceRoots[0]
	}
	if c.Cwd == "" {
		c.Cwd = c.ProjectDir
	}
	switch p.HookEventName {
	case BeforeShellExecution:
		if p.Command == nil {
			return nil, fmt.Errorf("beforeShellExecution payload has no command")
		}
		args, _ := json.Marshal(map[string]string{"command": *p.Command})
		c.Tool = "shell"
		c.Requests = []permission.Request{{Name: "shell", Arguments: args}}
	case BeforeReadFile:
		if p.FilePath == nil {
			return nil, fmt.Errorf("beforeReadFile payload has no file_path")
		}
		args, _ := json.Marshal(map[string]string{"file_path": *p.FilePath})
		c.Tool = "read_file"
		c.Requests = []permission.Request{{Name: "read_file", Arguments: args}}
	case BeforeMCPExecution:
		c.Tool = "MCP:" + p.ToolName
		c.Requests = []permission.Request{{Name: "mcp__" + p.ToolName, Arguments: json.RawMessage(`{}`)}}
	case "":
		return nil, fmt.Errorf("payload has no hook_event_name")
	default:
		return nil, fmt.Errorf("unsupported hook event %q: register 'cordon hook cursor' for beforeShellExecution, beforeReadFile and beforeMCPExecution", p.HookEventName)
	}
	return c, nil
}

type output struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// Answer is the answer to c: permission allow, ask or deny, and the
// reason for the user and the agent. beforeReadFile reads permission
// only, and only allow or deny.
func Answer(c *hookcall.Call, dec permission.Decision, _ json.RawMessage) ([]byte, error) {
	out := output{Permission: "deny"}
	switch dec.Action {
	case permission.Allow:
		out.Permission = "allow"
	case permission.Ask:
		if c.Event != BeforeReadFile {
			out.Permission = "ask"
		}
	}
	if c.Event != BeforeReadFile {
		out.UserMessage, out.AgentMessage = hookcall.Reason(dec), hookcall.Reason(dec)
	}
	return hookcall.Marshal(out)
}
