package permission

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cordon-sandbox/cordon/internal/strictjson"
)

// Action is a decision's verdict.
type Action string

const (
	Allow Action = "ALLOW"
	Ask   Action = "ASK"
	Deny  Action = "DENY"
)

// Rule ids are stable: audit logs, metrics, tests and users refer to them.
// Each id has one action; the package doc says when each fires.
const (
	RuleCrossAgent       = "guard.cross_agent"
	RuleInvalidArguments = "request.invalid_arguments"
	RuleOutsideWorkspace = "path.outside_workspace"
	RuleProtectedPath    = "guard.protected_path"
	RulePolicyDenied     = "policy.denied"
	RuleHardDeny         = "bash.hard_deny"
	RuleReadAllow        = "path.read_allow"
	RuleWriteApproval    = "path.write_requires_approval"
	RuleBashSandboxed    = "bash.sandboxed"
	RuleBashApproval     = "bash.requires_approval"
	RuleDefaultDeny      = "default.deny"
)

// Request is one tool call as the model made it; Arguments stay untyped
// until a rule has checked them.
type Request struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Decision is the pipeline's answer to one Request.
type Decision struct {
	ToolUseID string `json:"tool_use_id"`
	Action    Action `json:"action"`
	RuleID    string `json:"rule_id"`
	Reason    string `json:"reason"`
}

// DecodeRequest reads one request strictly: a JSON object with a string
// name; a key spelled otherwise than tool_use_id, name and arguments, a
// key given twice and trailing data are errors, each naming the key at
// fault. Arguments are kept as given (a missing or non-object value is
// left for request.invalid_arguments to deny, with its reason).
func DecodeRequest(data []byte) (Request, error) {
	var r Request
	if err := strictjson.Decode(data, &r, strictjson.Options{}); err != nil {
		return Request{}, fmt.Errorf("decode request: %w", err)
	}
	if r.Name == "" {
		return Request{}, errors.New(`decode request: missing tool name ("name")`)
	}
	return r, nil
}
