// Package gemini speaks Gemini CLI's hook protocol (BeforeTool and
// AfterTool command hooks in settings.json): the payload Gemini writes on
// stdin and the answer it reads on stdout.
//
// Gemini's tools: run_shell_command (a shell command), read_file,
// write_file, replace, list_directory, glob, grep_search and
// read_many_files, whose include patterns are each decided as a glob.
// Paths are read as Gemini reads them (permission.ToolsGemini).
package gemini

import (
	"encoding/json"
	"fmt"

	"github.com/cordon-sandbox/cordon/agents/hookcall"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/permission"
)

// The events cordon answers.
const (
	BeforeTool = "BeforeTool"
	AfterTool  = "AfterTool"
)

// payload is the part of Gemini's hook input cordon reads
// (hookEventHandler's createBaseInput and fireBeforeToolEvent).
type payload struct {
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

// Parse reads Gemini's payload.
func Parse(raw []byte) (*hookcall.Call, error) {
	var p payload
	if err := strictjson.Decode(raw, &p, strictjson.Options{IgnoreUnknown: true}); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	// Gemini runs every tool in the project directory (its target dir),
	// which is the payload's cwd and $GEMINI_PROJECT_DIR.
	c := &hookcall.Call{Event: p.HookEventName, Cwd: p.Cwd, Tool: p.ToolName}
	switch p.HookEventName {
	case AfterTool:
		return c, nil
	case BeforeTool:
		c.Decide = true
	case "":
		return nil, fmt.Errorf("payload has no hook_event_name")
	default:
		return nil, fmt.Errorf("unsupported hook event %q: register 'cordon hook gemini' for BeforeTool and AfterTool", p.HookEventName)
	}
	if p.ToolName == "" {
		return nil, fmt.Errorf("BeforeTool payload has no tool_name")
	}
	switch p.ToolName {
	case "run_shell_command":
		in, err := hookcall.Object(p.ToolName, p.ToolInput)
		if err != nil {
			return nil, err
		}
		c.Input, c.ShellKey = in, "command"
	case "read_many_files":
		var in struct {
			Include []string `json:"include"`
		}
		if err := json.Unmarshal(p.ToolInput, &in); err != nil {
			return nil, fmt.Errorf("read_many_files: \"include\" is not a list of strings")
		}
		for _, pat := range in.Include {
			args, _ := json.Marshal(map[string]string{"pattern": pat})
			c.Requests = append(c.Requests, permission.Request{Name: "glob", Arguments: args})
		}
		return c, nil
	}
	c.Requests = []permission.Request{{Name: p.ToolName, Arguments: p.ToolInput}}
	return c, nil
}

// output is Gemini's BeforeTool answer (BeforeToolHookOutput).
type output struct {
	Decision           string    `json:"decision"`
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
}

type specific struct {
	HookEventName string          `json:"hookEventName"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

// Answer is the answer to c: decision allow, ask or deny with the reason,
// and with updated (the rewritten shell call) in
// hookSpecificOutput.tool_input, which Gemini builds the call from anew.
func Answer(c *hookcall.Call, dec permission.Decision, updated json.RawMessage) ([]byte, error) {
	out := output{Reason: hookcall.Reason(dec)}
	switch dec.Action {
	case permission.Allow:
		out.Decision = "allow"
	case permission.Ask:
		out.Decision = "ask"
	default:
		out.Decision = "deny"
	}
	if updated != nil && dec.Action != permission.Deny {
		out.Reason += "; rewritten to run inside cordon's sandbox"
		out.HookSpecificOutput = &specific{HookEventName: BeforeTool, ToolInput: updated}
	}
	return hookcall.Marshal(out)
}
