// Package hookcall is what the agent adapters share: one hook call read
// from an agent's payload (Call), the bounded read of the payload, and
// the decision over several requests (a patch names several files, a
// grep several paths).
package hookcall

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cordon-sandbox/cordon/permission"
)

// MaxPayload bounds a payload. A larger one is refused, never cut: a cut
// payload could parse as another call.
const MaxPayload = 16 << 20

// Read reads one payload of at most MaxPayload bytes from r.
func Read(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read payload: %w", err)
	}
	if len(raw) > MaxPayload {
		return nil, fmt.Errorf("payload is larger than %d bytes", MaxPayload)
	}
	return raw, nil
}

// Call is one hook call as cordon needs it.
type Call struct {
	Event string // the agent's event name, for the audit log and errors
	// Decide: the call comes before a tool runs and wants an answer;
	// otherwise it reports a result, which is only logged.
	Decide     bool
	Cwd        string // where the agent's tools take relative paths from
	ProjectDir string // the project root the agent names, if any
	ToolUseID  string
	Tool       string // the agent's tool name
	// Requests are decided one by one; the most severe decision answers.
	Requests []permission.Request
	// ShellKey names the field of Input that holds a shell command the
	// tool runs, "" when it runs none; a rewrite wraps that command.
	ShellKey string
	// Input is the tool input as the agent gave it, for a rewrite.
	Input map[string]json.RawMessage
}

// Command is the shell command the call runs, if any.
func (c *Call) Command() (string, bool) {
	if c.ShellKey == "" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(c.Input[c.ShellKey], &s); err != nil {
		return "", false
	}
	return s, true
}

// WithCommand is the tool input with its shell command replaced, every
// other field kept.
func (c *Call) WithCommand(command string) (json.RawMessage, error) {
	in := make(map[string]json.RawMessage, len(c.Input))
	for k, v := range c.Input {
		in[k] = v
	}
	b, err := Marshal(command)
	if err != nil {
		return nil, err
	}
	in[c.ShellKey] = b
	return Marshal(in)
}

// Decide decides every request with d and returns the first most severe
// decision (DENY, then ASK, then ALLOW) and all of them, in order. A call
// with no request is denied.
func Decide(d *permission.Decider, c *Call) (permission.Decision, []permission.Decision) {
	if len(c.Requests) == 0 {
		dec := permission.Decision{ToolUseID: c.ToolUseID, Action: permission.Deny, RuleID: permission.RuleInvalidArguments,
			Reason: fmt.Sprintf("%s: the call names nothing cordon can decide", c.Tool)}
		return dec, []permission.Decision{dec}
	}
	all := make([]permission.Decision, len(c.Requests))
	worst := -1
	for i, r := range c.Requests {
		all[i] = d.Decide(r)
		if worst < 0 || severity(all[i].Action) > severity(all[worst].Action) {
			worst = i
		}
	}
	dec := all[worst]
	dec.ToolUseID = c.ToolUseID
	return dec, all
}

func severity(a permission.Action) int {
	switch a {
	case permission.Allow:
		return 0
	case permission.Ask:
		return 1
	}
	return 2
}

// Reason is a decision as the agent shows it: the rule id first.
func Reason(dec permission.Decision) string {
	return fmt.Sprintf("cordon %s: %s", dec.RuleID, dec.Reason)
}

// Object decodes a tool input that must be a JSON object.
func Object(tool string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("tool input of %s is not a JSON object", tool)
	}
	return m, nil
}

// Marshal is json.Marshal without HTML escaping: people read answers, and
// > and & are common in commands.
func Marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(b.String())), nil
}
