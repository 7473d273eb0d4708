package runner

import (
	"bytes"
	"context"

	"github.com/cordon-sandbox/cordon/permission"
)

// Event names a point in the loop where hooks are told what happened.
type Event string

const (
	PreToolUse         Event = "PreToolUse"
	PermissionDecision Event = "PermissionDecision"
	PostToolUse        Event = "PostToolUse"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
)

// HookEvent is what a hook sees. It is a copy: changing it changes
// nothing in the loop.
type HookEvent struct {
	Event    Event
	Request  permission.Request
	Decision permission.Decision
	Approval ApprovalStatus
	Result   *Result // PostToolUse only
	Prompt   string  // UserPromptSubmit only
}

// Hook observes the loop. It returns nothing on purpose: a hook cannot
// veto, allow, or rewrite a call.
type Hook func(ctx context.Context, ev HookEvent)

// SubmitPrompt tells hooks about a user prompt.
func (r *Runner) SubmitPrompt(ctx context.Context, prompt string) {
	r.fire(ctx, HookEvent{Event: UserPromptSubmit, Prompt: prompt})
}

// Stop tells hooks the loop has ended.
func (r *Runner) Stop(ctx context.Context) {
	r.fire(ctx, HookEvent{Event: Stop})
}

// fire gives each hook its own deep copy and recovers its panics.
func (r *Runner) fire(ctx context.Context, ev HookEvent) {
	for _, h := range r.Hooks {
		c := ev
		c.Request.Arguments = bytes.Clone(ev.Request.Arguments)
		if ev.Result != nil {
			res := *ev.Result
			c.Result = &res
		}
		func() {
			defer func() { _ = recover() }()
			h(ctx, c)
		}()
	}
}
