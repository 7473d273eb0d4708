package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/permission"
)

type memAudit struct{ kinds []string }

func (m *memAudit) Append(kind, id string, data any) error {
	if _, err := json.Marshal(data); err != nil {
		return err
	}
	m.kinds = append(m.kinds, kind+":"+id)
	return nil
}

type countingApprover struct {
	calls  int
	answer bool
	err    error
}

func (a *countingApprover) Approve(context.Context, *permission.Call, permission.Decision) (bool, error) {
	a.calls++
	return a.answer, a.err
}

func newRunner(t *testing.T) (*Runner, string, *memAudit) {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644))
	d, err := permission.New(permission.Config{Workspace: ws})
	require.NoError(t, err)
	a := &memAudit{}
	return &Runner{Decider: d, Handlers: FileHandlers(d), Audit: a}, ws, a
}

func call(name string, args map[string]any) permission.Request {
	b, _ := json.Marshal(args)
	return permission.Request{ToolUseID: "toolu_" + name, Name: name, Arguments: b}
}

func TestResolve(t *testing.T) {
	ask := permission.Decision{Action: permission.Ask}
	tests := []struct {
		name     string
		approver *countingApprover
		want     ApprovalStatus
	}{
		{"approve", &countingApprover{answer: true}, Approved},
		{"reject", &countingApprover{answer: false}, Rejected},
		{"error", &countingApprover{err: errors.New("boom")}, Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Resolve(context.Background(), tt.approver, nil, ask)
			require.Equal(t, tt.want, got)
			require.Equal(t, 1, tt.approver.calls)
		})
	}
	for _, act := range []permission.Action{permission.Deny, permission.Allow} {
		a := &countingApprover{answer: true}
		got, _ := Resolve(context.Background(), a, nil, permission.Decision{Action: act})
		require.Equal(t, NotRequired, got)
		require.Zero(t, a.calls, "%s must never reach the approver", act)
	}
	got, err := Resolve(context.Background(), nil, nil, ask)
	require.Equal(t, Cancelled, got)
	require.Error(t, err)
	got, _ = Resolve(context.Background(), ApproverFunc(func(context.Context, *permission.Call, permission.Decision) (bool, error) {
		panic("approver bug")
	}), nil, ask)
	require.Equal(t, Cancelled, got)
}

func TestConsole(t *testing.T) {
	ask := permission.Decision{ToolUseID: "t", Action: permission.Ask, RuleID: "x", Reason: "why"}
	c := &permission.Call{Request: permission.Request{Name: "bash"}}
	tests := []struct {
		in   string
		want ApprovalStatus
	}{
		{"y\n", Approved}, {"YES\n", Approved}, {"n\n", Rejected}, {"\n", Rejected},
		{"maybe\ny\n", Approved}, {"", Cancelled}, {"what\n", Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var out strings.Builder
			got, _ := Resolve(context.Background(), &Console{In: strings.NewReader(tt.in), Out: &out}, c, ask)
			require.Equal(t, tt.want, got)
			require.Contains(t, out.String(), "why")
		})
	}
	// Interrupt: the context is cancelled while the prompt waits.
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, _ := Resolve(ctx, &Console{In: r, Out: io.Discard}, c, ask)
	require.Equal(t, Cancelled, got)
}

func TestRunSuccessLeavesThreeRecords(t *testing.T) {
	r, _, a := newRunner(t)
	res := r.Run(context.Background(), call("read_file", map[string]any{"path": "notes.txt"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	require.Equal(t, "hello\n", res.Output)
	require.Empty(t, cmp.Diff([]string{"request:toolu_read_file", "permission:toolu_read_file", "result:toolu_read_file"}, a.kinds))
	require.False(t, res.Block().IsError)
}

func TestRunOutcomes(t *testing.T) {
	r, ws, _ := newRunner(t)
	r.Handlers["bash"] = Bash{Workspace: ws, Spawn: func(context.Context, string, string, []string, io.Writer, io.Writer) (int, error) {
		return -1, errors.New("fork: resource temporarily unavailable")
	}}.Handler()
	r.Handlers["edit_file"] = func(context.Context, *permission.Call) (string, error) { panic("edit bug") }
	r.Approver = &countingApprover{answer: true}
	tests := []struct {
		name    string
		req     permission.Request
		outcome Outcome
		errHas  string
	}{
		{"unknown tool blocked", call("teleport", map[string]any{}), Blocked, ""},
		{"hard deny blocked", call("bash", map[string]any{"command": "sudo id"}), Blocked, ""},
		{"handler error failed", call("read_file", map[string]any{"path": "missing.txt"}), Failed, "missing.txt"},
		{"spawn failure failed", call("bash", map[string]any{"command": "ls"}), Failed, "resource temporarily unavailable"},
		{"panic failed", call("edit_file", map[string]any{"path": "notes.txt"}), Failed, "edit bug"},
		{"approved write", call("write_file", map[string]any{"path": "out/new.txt", "content": "x"}), Succeeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(context.Background(), tt.req)
			require.Equal(t, tt.outcome, res.Outcome, "%+v", res)
			require.Contains(t, res.Error, tt.errHas)
			require.Equal(t, tt.outcome != Succeeded, res.Block().IsError)
		})
	}
	delete(r.Handlers, "glob")
	res := r.Run(context.Background(), call("glob", map[string]any{"pattern": "*"}))
	require.Equal(t, Failed, res.Outcome)
	require.Contains(t, res.Block().Content, `no handler for tool "glob"`)
}

func TestRunRejectedAndCancelledAreBlocked(t *testing.T) {
	for _, tt := range []struct {
		a    *countingApprover
		want ApprovalStatus
	}{{&countingApprover{answer: false}, Rejected}, {&countingApprover{err: io.EOF}, Cancelled}} {
		r, ws, _ := newRunner(t)
		r.Approver = tt.a
		res := r.Run(context.Background(), call("write_file", map[string]any{"path": "x.txt", "content": "x"}))
		require.Equal(t, Blocked, res.Outcome)
		require.Equal(t, tt.want, res.Approval)
		require.NoFileExists(t, filepath.Join(ws, "x.txt"))
	}
}

// No hook can turn a deny into an allow or skip the audit: hooks that
// rewrite what they see, or panic, change nothing.
func TestHooksCannotOverride(t *testing.T) {
	r, ws, _ := newRunner(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	path := filepath.Join(dir, "audit.jsonl")
	key, err := audit.NewKey()
	require.NoError(t, err)
	log, err := audit.Open(path, key)
	require.NoError(t, err)
	r.Audit = log
	var seen []Event
	r.Hooks = []Hook{
		func(_ context.Context, ev HookEvent) {
			seen = append(seen, ev.Event)
			ev.Decision.Action = permission.Allow
			ev.Approval = Approved
			for i := range ev.Request.Arguments {
				ev.Request.Arguments[i] = ' '
			}
			if ev.Result != nil {
				ev.Result.Outcome = Succeeded
			}
		},
		func(context.Context, HookEvent) { panic("hook bug") },
	}
	res := r.Run(context.Background(), call("write_file", map[string]any{"path": "../escape.txt", "content": "x"}))
	require.Equal(t, Blocked, res.Outcome)
	require.Equal(t, permission.Deny, res.Decision.Action)
	require.NoFileExists(t, filepath.Join(filepath.Dir(ws), "escape.txt"))
	require.Equal(t, []Event{PreToolUse, PermissionDecision, PostToolUse}, seen)
	recs, err := audit.Verify(path, key)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Contains(t, string(recs[1].Data), `"action":"DENY"`)
	require.Contains(t, string(recs[2].Data), `"outcome":"BLOCKED"`)
	r.SubmitPrompt(context.Background(), "hi")
	r.Stop(context.Background())
	require.Equal(t, []Event{PreToolUse, PermissionDecision, PostToolUse, UserPromptSubmit, Stop}, seen)
}

type failingAudit struct{}

func (failingAudit) Append(string, string, any) error { return errors.New("disk full") }

func TestAuditFailureBlocks(t *testing.T) {
	r, _, _ := newRunner(t)
	r.Audit = failingAudit{}
	res := r.Run(context.Background(), call("read_file", map[string]any{"path": "notes.txt"}))
	require.Equal(t, Blocked, res.Outcome)
	require.Contains(t, res.Error, "disk full")
}

func TestFileHandlers(t *testing.T) {
	r, ws, _ := newRunner(t)
	r.Approver = &countingApprover{answer: true}
	ctx := context.Background()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src/pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src/pkg/a.go"), []byte("a a"), 0o644))
	require.NoError(t, os.Symlink("/etc", filepath.Join(ws, "src/etc-link")))

	res := r.Run(ctx, call("glob", map[string]any{"pattern": "src/**/*.go"}))
	require.Equal(t, "src/pkg/a.go", res.Output, res.Error)
	res = r.Run(ctx, call("glob", map[string]any{"pattern": "src/*"}))
	require.Equal(t, "src/pkg", res.Output, "a link out of the workspace is not listed")

	res = r.Run(ctx, call("edit_file", map[string]any{"path": "src/pkg/a.go", "old_string": "a", "new_string": "b"}))
	require.Equal(t, Failed, res.Outcome)
	require.Contains(t, res.Error, "occurs 2 times")
	res = r.Run(ctx, call("edit_file", map[string]any{"path": "src/pkg/a.go", "old_string": "a", "new_string": "b", "replace_all": true}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	b, _ := os.ReadFile(filepath.Join(ws, "src/pkg/a.go"))
	require.Equal(t, "b b", string(b))
}

func TestBashHandler(t *testing.T) {
	fake := func(out string, code int) Spawner {
		return func(ctx context.Context, ws, cmd string, _ []string, stdout, stderr io.Writer) (int, error) {
			io.WriteString(stdout, out)
			io.WriteString(stderr, "!")
			return code, nil
		}
	}
	c := &permission.Call{Command: "make"}
	out, err := Bash{Spawn: fake("ok", 0)}.Handler()(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, "ok!", out)
	var got []string
	spy := func(ctx context.Context, ws, cmd string, ro []string, stdout, stderr io.Writer) (int, error) {
		got = ro
		return 0, nil
	}
	_, err = Bash{Spawn: spy, ReadOnly: []string{"/l.jsonl", "/l.jsonl.head"}}.Handler()(context.Background(), c)
	require.NoError(t, err)
	require.Equal(t, []string{"/l.jsonl", "/l.jsonl.head"}, got, "the audit log reaches the sandbox as read-only")
	_, err = Bash{Spawn: fake("", 2)}.Handler()(context.Background(), c)
	require.ErrorContains(t, err, "status 2")
	out, _ = Bash{Spawn: fake(strings.Repeat("x", 100), 0), MaxOutput: 10}.Handler()(context.Background(), c)
	require.Equal(t, strings.Repeat("x", 10)+"\n[91 more bytes of output dropped]", out)
	slow := func(ctx context.Context, ws, cmd string, _ []string, stdout, stderr io.Writer) (int, error) {
		<-ctx.Done()
		return -1, ctx.Err()
	}
	_, err = Bash{Spawn: slow, Timeout: 10_000_000}.Handler()(context.Background(), c)
	require.ErrorContains(t, err, "timed out")
	_, err = Bash{}.Handler()(context.Background(), c)
	require.ErrorContains(t, err, "no sandbox")
}

// A glob looks at a bounded number of entries, matched or not: the tree
// it walks, outside the sandbox, may have been filled by one.
func TestGlobVisitsAreBounded(t *testing.T) {
	r, ws, _ := newRunner(t)
	for i := range 30 {
		require.NoError(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("f%02d.txt", i)), nil, 0o644))
	}
	defer func(n int) { maxGlobVisits = n }(maxGlobVisits)
	maxGlobVisits = 20
	res := r.Run(context.Background(), call("glob", map[string]any{"pattern": "**/*.go"}))
	require.Equal(t, Failed, res.Outcome, res.Output)
	require.Contains(t, res.Error, "more than 20 entries")
	maxGlobVisits = 100
	res = r.Run(context.Background(), call("glob", map[string]any{"pattern": "*.txt"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
}
