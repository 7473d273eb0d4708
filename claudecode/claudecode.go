// Package claudecode speaks Claude Code's hook protocol: the PreToolUse
// and PostToolUse payloads Claude Code sends a hook on stdin, the answer
// it reads on stdout, the workspace a payload implies, and the rewrite
// that runs an allowed Bash call inside 'cordon run'. The other agents'
// adapters are packages under agents/.
//
// The decisions are package permission's; 'cordon hook claude-code'
// parses its flags, keeps the audit log and prints what Answer returns:
//
//	p, raw, err := claudecode.ReadPayload(os.Stdin)
//	ws, note, err := claudecode.Workspace(flagDir, os.Getenv("CLAUDE_PROJECT_DIR"), p.Cwd)
//	d, err := permission.New(permission.Config{Workspace: ws, ...})
//	req, dec, out, err := claudecode.Answer(d, p, note, nil)
//	b, err := claudecode.Encode(out)
//
// Each path is decided as Claude Code will open it (trimmed, "~" and "~/"
// expanded, relative to the payload's cwd): permission's rows for Claude
// Code's tools carry that spelling, and refuse a path that trimming would
// change. An answer is about the paths as they are at that instant:
// Claude Code does the file I/O afterwards. What the kernel holds is the sandbox
// around Bash (Rewrite).
package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/guards"
	"github.com/cordon-sandbox/cordon/internal/strictjson"
	"github.com/cordon-sandbox/cordon/permission"
	"github.com/cordon-sandbox/cordon/workspace"
)

// The hook events cordon answers.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// MaxPayload bounds what ReadPayload reads of a payload.
const MaxPayload = 16 << 20

// Payload is what Claude Code sends on stdin.
type Payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID      string          `json:"tool_use_id"`
}

// Output is a hook's answer to PreToolUse.
type Output struct {
	HookSpecificOutput Decision `json:"hookSpecificOutput"`
}

// Decision is the answer's hookSpecificOutput: allow, ask or deny, the
// reason (the rule id first), and the rewritten tool input, if any.
type Decision struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// ReadPayload reads one payload (at most MaxPayload bytes) from r. raw is
// its text, which the audit log keeps for PostToolUse. Keys Payload does
// not name are ignored (Claude Code adds fields), but Payload's own keys
// match only in their exact spelling and only once: encoding/json would
// read "TOOL_NAME" as tool_name, and let the last of two tool_name keys
// win.
func ReadPayload(r io.Reader) (p *Payload, raw []byte, err error) {
	raw, err = io.ReadAll(io.LimitReader(r, MaxPayload))
	if err != nil {
		return nil, nil, fmt.Errorf("read payload: %w", err)
	}
	p = &Payload{}
	if err := strictjson.Decode(raw, p, strictjson.Options{IgnoreUnknown: true}); err != nil {
		return nil, nil, fmt.Errorf("payload: %w", err)
	}
	return p, raw, nil
}

// Answer decides the PreToolUse payload p with d. It returns the request
// and the decision (for the audit log) and the answer, whose reason
// carries note, else a note on p's cwd when that is not a place the
// agent may work in. With rw, a Bash call that is not denied comes back
// rewritten to run inside 'cordon run'; the decision is unchanged. The
// only error is the rewrite's.
func Answer(d *permission.Decider, p *Payload, note string, rw *Rewrite) (permission.Request, permission.Decision, Output, error) {
	req := permission.Request{ToolUseID: p.ToolUseID, Name: p.ToolName, Arguments: p.ToolInput}
	dec := d.Decide(req)
	out := Decision{
		HookEventName:            PreToolUse,
		PermissionDecision:       strings.ToLower(string(dec.Action)),
		PermissionDecisionReason: fmt.Sprintf("cordon %s: %s", dec.RuleID, dec.Reason),
	}
	if note == "" {
		note = cwdNote(d, p.Cwd)
	}
	if note != "" {
		out.PermissionDecisionReason += " [" + note + "]"
	}
	if rw != nil && dec.Action != permission.Deny {
		if core, _ := permission.CoreName(p.ToolName); core == permission.ToolBash {
			updated, err := rw.input(p.ToolInput)
			if err != nil {
				return req, dec, Output{}, err
			}
			out.UpdatedInput = updated
			out.PermissionDecisionReason += "; rewritten to run inside cordon's sandbox"
		}
	}
	return req, dec, Output{HookSpecificOutput: out}, nil
}

// Encode is the answer as Claude Code reads it: JSON without HTML
// escaping, since people (and shells) read it and > or & are common in
// commands.
func Encode(o Output) ([]byte, error) {
	return marshalPlain(o)
}

// Workspace picks the workspace: flagDir (--workspace), else the project
// root Claude Code names (projectDir, $CLAUDE_PROJECT_DIR), else the
// payload's cwd. The cwd is the session's current directory, which the
// agent moves with cd, so it is the workspace only when nothing else
// names one. Neither it nor the project root is ever a directory inside
// .git: it is cut back to the work tree that holds .git, and note says
// so. A cwd inside another protected name (.claude, .vscode, ...) is
// refused when nothing else names the project, and so is a cwd that is
// not an absolute path.
func Workspace(flagDir, projectDir, cwd string) (ws, note string, err error) {
	if cwd != "" && (!filepath.IsAbs(cwd) || strings.IndexByte(cwd, 0) >= 0) {
		return "", "", fmt.Errorf("payload cwd %q is not an absolute path", cwd)
	}
	dir, from := cwd, "payload cwd"
	switch {
	case flagDir != "":
		return flagDir, "", nil // the user's explicit choice, as for 'cordon run'
	case projectDir != "":
		dir, from = projectDir, "CLAUDE_PROJECT_DIR"
		if !filepath.IsAbs(dir) {
			// Claude Code names the project root absolutely; a relative
			// one would be taken from wherever the hook happens to run.
			return "", "", fmt.Errorf("CLAUDE_PROJECT_DIR %q is not an absolute path", dir)
		}
	case cwd == "":
		return "", "", errors.New("no workspace: pass --workspace DIR, or run from Claude Code (CLAUDE_PROJECT_DIR, payload cwd)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("%s %q: %w", from, dir, err)
	}
	real, err := guards.Realpath(abs)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", from, err)
	}
	// Checked here, so that the error names where the directory came
	// from: the policy would blame --workspace, which was not given.
	if fi, err := os.Stat(real); err != nil {
		return "", "", fmt.Errorf("%s %q: %w", from, dir, err)
	} else if !fi.IsDir() {
		return "", "", fmt.Errorf("%s %q: not a directory", from, dir)
	}
	top, name := belowProtectedName(real)
	switch {
	case name == ".git":
		// A workspace inside .git would leave that repository's hooks
		// and config writable (protections apply below a workspace); the
		// work tree that holds it is the project.
		return top, fmt.Sprintf("workspace %s: %s %s is inside .git, which is never a workspace", top, from, dir), nil
	case name != "" && from == "payload cwd":
		// Cutting back could widen the workspace far beyond the project
		// (a project under ~/.vscode would become HOME): refuse instead.
		return "", "", fmt.Errorf("payload cwd %s is inside %s, which is never a workspace, and no project root is named: pass --workspace DIR or set CLAUDE_PROJECT_DIR", dir, name)
	}
	return dir, "", nil
}

// belowProtectedName returns the directory above the first component of
// p that is .git or an auto-executed name, and that name.
func belowProtectedName(p string) (top, name string) {
	protected := map[string]bool{".git": true}
	for _, n := range workspace.AutoExecNames {
		protected[n] = true
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		j := i
		if i > 1 && protected[parts[i-1]+"/"+c] {
			// a name of two components (.github/hooks)
			j, c = i-1, parts[i-1]+"/"+c
		}
		if protected[c] && j > 0 {
			top = strings.Join(parts[:j], "/")
			if top == "" {
				top = "/"
			}
			return top, c
		}
	}
	return "", ""
}

// cwdNote says why the payload's cwd is not the workspace when it is not
// a place the agent may work in: outside the workspace, inside .git, or
// protected. Relative paths are still taken from it, since Claude Code's
// tools take them from there; the rules then refuse what leaves the
// workspace or touches what is protected.
func cwdNote(d *permission.Decider, cwd string) string {
	if cwd == "" {
		return ""
	}
	real, err := guards.Realpath(cwd)
	if err != nil {
		return fmt.Sprintf("workspace %s: payload cwd %s cannot be resolved (%v)", d.Workspace(), cwd, err)
	}
	ws := d.Workspace()
	switch {
	case !guards.Within(ws, real):
		return fmt.Sprintf("workspace %s: payload cwd %s is outside it", ws, cwd)
	case real == ws:
		return ""
	}
	if _, name := belowProtectedName(strings.TrimPrefix(real, ws)); name != "" {
		return fmt.Sprintf("workspace %s: payload cwd %s is inside %s", ws, cwd, name)
	}
	if v := d.Policy().Explain(real); !v.Write {
		return fmt.Sprintf("workspace %s: payload cwd %s is protected (%s)", ws, cwd, v.Reason)
	}
	return ""
}

// marshalPlain is json.Marshal without HTML escaping.
func marshalPlain(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
