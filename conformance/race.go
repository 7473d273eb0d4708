package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/permission"
	"github.com/cordon-sandbox/cordon/runner"
)

// Races of cordon's work outside the sandbox: the runner's file tools,
// raced by a swapper running inside a sandbox of the same workspace.

// raceAttempt is one file tool call of a race, as the runner returned it,
// and whether it met the swap.
type raceAttempt struct {
	Tool     string `json:"tool"`
	Action   string `json:"action"`
	Outcome  string `json:"outcome"`
	Output   string `json:"output,omitempty"`
	Error    string `json:"error,omitempty"`
	Approval string `json:"approval"`
	Swapped  bool   `json:"swapped,omitempty"`
}

// raceRequests are the calls of a race, in turn: mode "write" goes
// through DIR to write ~/.bashrc, to make directories there and to edit
// it; mode "read" to read, list and glob ~/.ssh.
func raceRequests(mode string, i int) permission.Request {
	args := func(m map[string]any) json.RawMessage { b, _ := json.Marshal(m); return b }
	id := fmt.Sprintf("race-%d", i)
	switch mode + strconv.Itoa(i%3) {
	case "write0":
		return permission.Request{ToolUseID: id, Name: permission.ToolWriteFile, Arguments: args(map[string]any{"path": "dir/.bashrc", "content": "written token\n"})}
	case "write1":
		return permission.Request{ToolUseID: id, Name: permission.ToolWriteFile, Arguments: args(map[string]any{"path": fmt.Sprintf("dir/new-%d/x", i), "content": "x\n"})}
	case "write2":
		return permission.Request{ToolUseID: id, Name: permission.ToolEditFile, Arguments: args(map[string]any{"path": "dir/.bashrc", "old_string": "token", "new_string": "token", "replace_all": true})}
	case "read0":
		return permission.Request{ToolUseID: id, Name: permission.ToolReadFile, Arguments: args(map[string]any{"path": "dir/secret"})}
	case "read1":
		return permission.Request{ToolUseID: id, Name: permission.ToolReadFile, Arguments: args(map[string]any{"path": "dir"})}
	default:
		return permission.Request{ToolUseID: id, Name: permission.ToolGlob, Arguments: args(map[string]any{"pattern": "dir/*"})}
	}
}

// raceFileTools runs n calls of mode through the runner's file handlers in
// workspace ws, approving every ASK as a user who trusts the call would.
// Every other allowed call meets the swap at the exact moment: a hook
// between the decision and the I/O (where a real loop asks the user, writes
// the audit trail and runs hooks) exchanges ws/dir with ws/link, a symlink
// to elsewhere, as a sandbox of the workspace could; they are exchanged
// back once the call returns. The calls in between must simply work.
func raceFileTools(ctx context.Context, ws, mode string, n int) ([]raceAttempt, error) {
	d, err := permission.New(permission.Config{Workspace: ws})
	if err != nil {
		return nil, err
	}
	dir, link := filepath.Join(ws, "dir"), filepath.Join(ws, "link")
	exchange := func() error {
		for _, mv := range [][2]string{{dir, dir + ".x"}, {link, dir}, {dir + ".x", link}} {
			if err := os.Rename(mv[0], mv[1]); err != nil {
				return err
			}
		}
		return nil
	}
	swap, swapped := false, false
	var swapErr error
	at := func(_ context.Context, ev runner.HookEvent) {
		if ev.Event != runner.PermissionDecision || ev.Decision.Action == permission.Deny || !swap || swapped {
			return
		}
		if swapErr = exchange(); swapErr == nil {
			swapped = true
		}
	}
	r := &runner.Runner{Decider: d, Handlers: runner.FileHandlers(d), Hooks: []runner.Hook{at},
		Approver: runner.ApproverFunc(func(context.Context, *permission.Call, permission.Decision) (bool, error) { return true, nil })}
	out := make([]raceAttempt, 0, n)
	for i := range n {
		req := raceRequests(mode, i)
		swap, swapped = i%2 == 0, false
		res := r.Run(ctx, req)
		if swapped {
			if err := exchange(); err != nil {
				return out, fmt.Errorf("exchange back: %w", err)
			}
		}
		if swapErr != nil {
			return out, fmt.Errorf("exchange: %w", swapErr)
		}
		out = append(out, raceAttempt{Tool: req.Name, Action: string(res.Decision.Action), Outcome: string(res.Outcome),
			Output: res.Output, Error: res.Error, Approval: string(res.Approval), Swapped: swapped})
	}
	return out, nil
}

func init() {
	// Not an attack: the host side of a race, run by the harness as the
	// case's user (the runner's file tools run outside any sandbox).
	attacks["race-filetools"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 3 {
			return usage(errw, "race-filetools write|read WORKSPACE N")
		}
		n, err := strconv.Atoi(a[2])
		if err != nil {
			return usage(errw, "race-filetools write|read WORKSPACE N")
		}
		res, err := raceFileTools(context.Background(), a[1], a[0], n)
		if err != nil {
			fmt.Fprintln(errw, err)
			return 1
		}
		json.NewEncoder(out).Encode(res)
		return 0
	}
}

// raceStats counts a race's attempts.
type raceStats struct {
	attempts, denied, swapped, succeeded, raced, failed int
}

func (s raceStats) String() string {
	return fmt.Sprintf("attempts=%d decided-deny=%d swapped=%d succeeded=%d raced-refused=%d other-failed=%d",
		s.attempts, s.denied, s.swapped, s.succeeded, s.raced, s.failed)
}

// refusedForLink tells a handler's refusal of a link met at open time (the
// swap, caught by the kernel) from other failures.
func refusedForLink(errText string) bool {
	return strings.Contains(errText, "symbolic link") || strings.Contains(errText, "not a directory")
}

func countRace(as []raceAttempt) raceStats {
	s := raceStats{attempts: len(as)}
	for _, a := range as {
		if a.Swapped {
			s.swapped++
		}
		switch {
		case a.Action == string(permission.Deny):
			s.denied++
		case a.Outcome == string(runner.Succeeded):
			s.succeeded++
		case a.Swapped && refusedForLink(a.Error):
			s.raced++
		default:
			s.failed++
		}
	}
	return s
}

// logRace appends a line to $CORDON_RACE_STATS, when set, for the record
// of how often a race was won and refused.
func (h *H) logRace(name string, stats fmt.Stringer, extra string) {
	p := os.Getenv("CORDON_RACE_STATS")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s user=%s executor=%s %s %s\n", name, h.User.Name, h.x.Name(), stats, extra)
}

// bg is a sandbox running in the background.
type bg struct {
	done chan Output
	out  *Output
	stop context.CancelFunc
}

// wait waits for the sandbox to end and returns what it printed.
func (b *bg) wait() Output {
	if b.out == nil {
		o := <-b.done
		b.out = &o
		b.stop()
	}
	return *b.out
}

// background starts script in a sandbox under p, as Sandbox does, without
// waiting for it; the case's end kills it if it still runs.
func (h *H) background(p Policy, script string, env ...string) *bg {
	dir := p.Workspace
	if dir == "" {
		dir = h.Dir
	}
	h.handOver()
	h.forgetState(p)
	l := Launch{Policy: p, Dir: dir, Env: h.env(env),
		Argv: []string{"/bin/sh", "-c", prologue + script + "\necho \"@@DO\"\"NE@@\"\n"}}
	ctx, cancel := context.WithTimeout(h.ctx, 3*time.Minute)
	b := &bg{done: make(chan Output, 1), stop: cancel}
	go func() {
		o, err := h.x.Exec(ctx, h.User, l)
		if err != nil {
			o.Code, o.Stderr = -1, o.Stderr+"\nlaunch: "+err.Error()
		}
		b.done <- o
	}()
	h.Cleanup(func() { cancel(); b.wait() })
	return b
}

// runFileToolRace runs the runner's file tools as the case's user: in this
// process for the invoker (so the mutation check's hooks apply), else in
// the helper binary with the user's credentials.
func (h *H) runFileToolRace(ws, mode string, n int) []raceAttempt {
	if h.User.Invoker {
		res, err := raceFileTools(h.ctx, ws, mode, n)
		if err != nil {
			h.Fatalf("race: %v", err)
		}
		return res
	}
	o := h.hostAs(h.Attack(), "__attack", "race-filetools", mode, ws, strconv.Itoa(n))
	var res []raceAttempt
	if err := json.Unmarshal([]byte(o), &res); err != nil {
		h.Fatalf("race: %v: %s", err, clip(o))
	}
	return res
}

// hostAs runs argv on the host (outside any sandbox) as the case's user
// and returns its stdout; it fails the case on error.
func (h *H) hostAs(argv ...string) string {
	h.handOver()
	cmd := exec.CommandContext(h.ctx, argv[0], argv[1:]...)
	cmd.Dir = h.Dir
	cmd.Env = h.env(nil)
	if !h.User.Invoker {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(h.User.Uid), Gid: uint32(h.User.Gid), Groups: []uint32{}}}
	}
	ownGroup(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.Fatalf("host: %v: %v: %s", argv, err, stderr.String())
	}
	return string(out)
}
