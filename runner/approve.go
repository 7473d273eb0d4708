package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/permission"
)

// ApprovalStatus is how an ASK was settled.
type ApprovalStatus string

const (
	NotRequired ApprovalStatus = "not_required" // ALLOW and DENY never reach an approver
	Approved    ApprovalStatus = "approved"
	Rejected    ApprovalStatus = "rejected"
	Cancelled   ApprovalStatus = "cancelled" // error, EOF, interrupt, or no approver
)

// Approver is asked about ASK decisions only. true approves, false
// rejects, an error cancels.
type Approver interface {
	Approve(ctx context.Context, call *permission.Call, d permission.Decision) (bool, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, call *permission.Call, d permission.Decision) (bool, error)

func (f ApproverFunc) Approve(ctx context.Context, call *permission.Call, d permission.Decision) (bool, error) {
	return f(ctx, call, d)
}

// Resolve settles a decision: only ASK consults a; a nil approver, an
// error or a panic cancel, so nothing runs by accident.
func Resolve(ctx context.Context, a Approver, call *permission.Call, d permission.Decision) (status ApprovalStatus, err error) {
	if d.Action != permission.Ask {
		return NotRequired, nil
	}
	if a == nil {
		return Cancelled, errors.New("approve: no approver to ask")
	}
	defer func() {
		if p := recover(); p != nil {
			status, err = Cancelled, fmt.Errorf("approve: approver panicked: %v", p)
		}
	}()
	ok, err := a.Approve(ctx, call, d)
	switch {
	case err != nil:
		return Cancelled, err
	case ok:
		return Approved, nil
	}
	return Rejected, nil
}

// Console asks on a terminal: y or yes approves; n, no or an empty line
// rejects; end of input or a cancelled context (wire Ctrl-C to it) cancels.
type Console struct {
	In  io.Reader
	Out io.Writer

	once  sync.Once
	lines chan lineOrErr
}

type lineOrErr struct {
	text string
	err  error
}

// maxTries bounds re-prompting on an answer that is neither yes nor no.
const maxTries = 3

func (c *Console) Approve(ctx context.Context, call *permission.Call, d permission.Decision) (bool, error) {
	// One reader for the console's lifetime, so a read abandoned by a
	// cancelled prompt is not lost to, or raced by, the next prompt.
	c.once.Do(func() {
		c.lines = make(chan lineOrErr)
		go func() {
			s := bufio.NewScanner(c.In)
			for s.Scan() {
				c.lines <- lineOrErr{text: s.Text()}
			}
			err := s.Err()
			if err == nil {
				err = io.EOF
			}
			for {
				c.lines <- lineOrErr{err: err}
			}
		}()
	})
	fmt.Fprintf(c.Out, "%s wants to run %s\n  %s %s: %s\n", d.ToolUseID, call.Name, d.Action, d.RuleID, d.Reason)
	for range maxTries {
		fmt.Fprint(c.Out, "Allow? [y/N] ")
		select {
		case <-ctx.Done():
			fmt.Fprintln(c.Out)
			return false, fmt.Errorf("approve %s: %w", d.ToolUseID, ctx.Err())
		case l := <-c.lines:
			if l.err != nil {
				fmt.Fprintln(c.Out)
				return false, fmt.Errorf("approve %s: %w", d.ToolUseID, l.err)
			}
			switch strings.ToLower(strings.TrimSpace(l.text)) {
			case "y", "yes":
				return true, nil
			case "", "n", "no":
				return false, nil
			}
			fmt.Fprintln(c.Out, "Please answer y or n.")
		}
	}
	return false, nil
}
