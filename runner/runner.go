package runner

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/permission"
)

// Outcome is what happened to a call.
type Outcome string

const (
	Blocked   Outcome = "BLOCKED"
	Succeeded Outcome = "SUCCEEDED"
	Failed    Outcome = "FAILED"
)

// Handler executes one checked call; call.Resolved is the path the
// decision was made on.
type Handler func(ctx context.Context, call *permission.Call) (output string, err error)

// Auditor records the trail; *audit.Log is one.
type Auditor interface {
	Append(kind, toolUseID string, data any) error
}

// Result is the outcome of one call.
type Result struct {
	ToolUseID string              `json:"tool_use_id"`
	Outcome   Outcome             `json:"outcome"`
	Decision  permission.Decision `json:"decision"`
	Approval  ApprovalStatus      `json:"approval"`
	Output    string              `json:"output,omitempty"`
	Error     string              `json:"error,omitempty"`
}

// ToolResultBlock is the content block handed back to the model.
type ToolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Block turns a result into a tool_result block; BLOCKED and FAILED are
// errors the model is told about, with the reason.
func (r Result) Block() ToolResultBlock {
	b := ToolResultBlock{Type: "tool_result", ToolUseID: r.ToolUseID, Content: r.Output}
	switch r.Outcome {
	case Blocked:
		b.IsError = true
		b.Content = fmt.Sprintf("blocked by %s (%s, approval %s): %s", r.Decision.RuleID, r.Decision.Action, r.Approval, r.Decision.Reason)
		if r.Error != "" {
			b.Content += "; " + r.Error
		}
	case Failed:
		b.IsError = true
		if b.Content != "" {
			b.Content += "\n"
		}
		b.Content += "error: " + r.Error
	}
	return b
}

// Runner is the governed loop. Decider is required; the rest are optional
// (no approver cancels every ASK, no audit keeps no trail).
type Runner struct {
	Decider  *permission.Decider
	Approver Approver
	Handlers map[string]Handler // by core tool name
	Hooks    []Hook
	Audit    Auditor
}

// permissionRecord is the audit data of a permission record.
type permissionRecord struct {
	permission.Decision
	Approval ApprovalStatus `json:"approval"`
	Error    string         `json:"approval_error,omitempty"`
}

// Run takes one call through the pipeline. It never panics and never
// returns without a result record attempt.
func (r *Runner) Run(ctx context.Context, req permission.Request) Result {
	r.fire(ctx, HookEvent{Event: PreToolUse, Request: req})
	dec, call := r.Decider.Evaluate(req)
	res := Result{ToolUseID: req.ToolUseID, Decision: dec, Approval: NotRequired}

	auditErr := r.record(audit.KindRequest, req.ToolUseID, req)
	var approvalErr error
	if auditErr == nil {
		// Nobody is asked about a call that could not be recorded.
		res.Approval, approvalErr = Resolve(ctx, r.Approver, call, dec)
	} else if dec.Action == permission.Ask {
		res.Approval = Cancelled
	}
	pr := permissionRecord{Decision: dec, Approval: res.Approval}
	if approvalErr != nil {
		pr.Error = approvalErr.Error()
	}
	if err := r.record(audit.KindPermission, req.ToolUseID, pr); err != nil && auditErr == nil {
		auditErr = err
	}
	r.fire(ctx, HookEvent{Event: PermissionDecision, Request: req, Decision: dec, Approval: res.Approval})

	allowed := dec.Action == permission.Allow || dec.Action == permission.Ask && res.Approval == Approved
	switch {
	case auditErr != nil:
		res.Outcome, res.Error = Blocked, "audit trail unavailable: "+auditErr.Error()
	case !allowed:
		res.Outcome = Blocked
	default:
		res.Output, res.Error = r.execute(ctx, call)
		res.Outcome = Succeeded
		if res.Error != "" {
			res.Outcome = Failed
		}
	}
	if err := r.record(audit.KindResult, req.ToolUseID, res); err != nil && res.Error == "" {
		res.Error = "audit trail unavailable: " + err.Error()
	}
	r.fire(ctx, HookEvent{Event: PostToolUse, Request: req, Decision: dec, Approval: res.Approval, Result: &res})
	return res
}

// execute calls the handler; a missing handler, an error and a panic all
// become the error text of a FAILED result.
func (r *Runner) execute(ctx context.Context, call *permission.Call) (out, errText string) {
	h := r.Handlers[call.Tool]
	if h == nil {
		return "", fmt.Sprintf("no handler for tool %q", call.Tool)
	}
	defer func() {
		if p := recover(); p != nil {
			out, errText = "", fmt.Sprintf("handler for %s panicked: %v\n%s", call.Tool, p, firstLines(debug.Stack(), 12))
		}
	}()
	out, err := h(ctx, call)
	if err != nil {
		return out, err.Error()
	}
	return out, ""
}

func (r *Runner) record(kind, id string, data any) error {
	if r.Audit == nil {
		return nil
	}
	return r.Audit.Append(kind, id, data)
}

func firstLines(b []byte, n int) []byte {
	for i, c := range b {
		if c == '\n' {
			if n--; n == 0 {
				return b[:i]
			}
		}
	}
	return bytes.TrimSpace(b)
}
