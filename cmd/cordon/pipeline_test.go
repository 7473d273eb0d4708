package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/permission"
)

func TestDecideCommand(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name, in     string
		code         int
		action, rule string // or, for an error, what stderr says
	}{
		{"hard deny", `{"tool_use_id":"1","name":"bash","arguments":{"command":"sudo make install"}}`, 0, "DENY", permission.RuleHardDeny},
		{"outside", `{"tool_use_id":"2","name":"read_file","arguments":{"path":"../x"}}`, 0, "DENY", permission.RuleOutsideWorkspace},
		{"read", `{"tool_use_id":"3","name":"read_file","arguments":{"path":"x"}}`, 0, "ALLOW", permission.RuleReadAllow},
		{"malformed", `{"tool_use_id":`, exitCordonError, "", "cordon decide: decode request: the JSON ends before its object is closed"},
		{"not an object", `[]`, exitCordonError, "", "cordon decide: decode request: a JSON object is expected, not an array"},
		{"keys in another case", `{"TOOL_USE_ID":"4","NAME":"bash","arguments":{"command":"ls"}}`, exitCordonError, "",
			`cordon decide: decode request: "TOOL_USE_ID" is not a key; did you mean "tool_use_id"?`},
		{"a key twice", `{"tool_use_id":"5","name":"read_file","name":"bash","arguments":{"command":"ls","path":"x"}}`, exitCordonError, "",
			`cordon decide: decode request: "name" is given twice`},
		{"name not a string", `{"name":["bash"]}`, exitCordonError, "", `cordon decide: decode request: "name" must be a string, not an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.in, "decide", "--workspace", ws)
			require.Equal(t, tt.code, code, errs)
			if tt.code != 0 {
				require.Equal(t, tt.rule+"\n", errs)
				require.Empty(t, out)
				return
			}
			var d permission.Decision
			require.NoError(t, json.Unmarshal([]byte(out), &d), out)
			require.Equal(t, []string{tt.action, tt.rule}, []string{string(d.Action), d.RuleID})
		})
	}
	code, _, errs := runCLI(t, "", "decide")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "--workspace")
	code, out, _ := runCLI(t, "", "decide", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "Examples:")
}

func TestDemoAndAuditVerify(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(dir, "state"))
	log := filepath.Join(dir, "demo.jsonl")
	code, out, errs := runCLI(t, "", "demo", "--audit", log)
	require.Equal(t, exitOK, code, out+errs)
	for _, want := range []string{"path.read_allow", "approved", "rejected", "cancelled", "bash.hard_deny",
		"path.outside_workspace", "resolves to", "default.deny", "FAILED", "Every step went as scripted"} {
		require.Contains(t, out, want)
	}
	code, out, _ = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "30 records")

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, bytes.Replace(b, []byte("toolu_05"), []byte("toolu_99"), 1), 0o600))
	code, out, _ = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitFail, code)
	require.Contains(t, out, "record 13")
}

func TestAuditCommand(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(dir, "state"))

	for _, args := range [][]string{{"audit", "--help"}, {"audit", "verify", "--help"}, {"audit", "key", "--help"}, {"audit", "key", "export", "-h"}} {
		code, out, errs := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errs)
		require.Contains(t, out, "Usage: cordon "+strings.Join(args[:len(args)-1], " "), args)
		require.Empty(t, errs)
	}
	for _, args := range [][]string{{"audit"}, {"audit", "frob"}, {"audit", "verify", "--nope"}, {"audit", "verify", "a", "b"}, {"audit", "key"}, {"audit", "key", "export", "a", "b"}} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, "%v", args)
	}
	require.NoFileExists(t, "--help.head")

	// No key yet: verify and export say so.
	code, _, errs := runCLI(t, "", "audit", "key", "export")
	require.Equal(t, exitCordonError, code)
	require.Contains(t, errs, "no audit key")

	// A log written here, moved with its exported key, verifies with it.
	log := filepath.Join(dir, "run.jsonl")
	code, out, errs := runCLI(t, "", "demo", "--audit", log)
	require.Equal(t, exitOK, code, out+errs)
	keyFile := filepath.Join(dir, "exported.key")
	code, _, errs = runCLI(t, "", "audit", "key", "export", keyFile)
	require.Equal(t, exitOK, code, errs)
	code, out, _ = runCLI(t, "", "audit", "key", "export")
	require.Equal(t, exitOK, code)
	exported, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.Equal(t, string(exported), out)
	code, _, _ = runCLI(t, "", "audit", "key", "export", keyFile)
	require.Equal(t, exitCordonError, code, "an existing file is not overwritten")

	t.Setenv(state.EnvDir, filepath.Join(dir, "other-machine"))
	code, _, errs = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitCordonError, code, "no key: no answer either way")
	require.Contains(t, errs, "no audit key")
	code, out, _ = runCLI(t, "", "audit", "verify", "--key", keyFile, log)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "OK ")
	code, out, _ = runCLI(t, "", "audit", "verify", "--json", "--key", keyFile, log)
	require.Equal(t, exitOK, code, out)
	var v struct {
		Path, Verdict, Key string
		Records            int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Equal(t, "OK", v.Verdict)
	require.Equal(t, log, v.Path)
	require.Positive(t, v.Records)
	code, out, _ = runCLI(t, "", "audit", "verify", "--json", log)
	require.Equal(t, exitCordonError, code, "no key here: no verdict, and no JSON")
	require.Empty(t, out)
	code, out, _ = runCLI(t, "", "audit", "verify", log, "--key", keyFile)
	require.Equal(t, exitOK, code, out)
	// Another machine's own key is the wrong one.
	_, err = audit.UserKey()
	require.NoError(t, err)
	code, out, _ = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitFail, code)
	require.Contains(t, out, "WRONG KEY")
}

func TestAuditForget(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(dir, "state"))
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	log := filepath.Join(dir, "hook.jsonl")
	in := `{"hook_event_name":"PreToolUse","cwd":"` + ws + `","tool_name":"Read","tool_input":{"file_path":"x"},"tool_use_id":"t"}`
	code, _, errs := runCLI(t, in, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	require.NoError(t, os.Remove(log))
	require.NoError(t, os.Remove(log+".head"))
	code, _, errs = runCLI(t, in, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, errs, "cordon audit forget "+log)
	code, out, _ := runCLI(t, "", "audit", "forget", log)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "no longer holds")
	code, _, errs = runCLI(t, in, "hook", "claude-code", "--audit", log)
	require.Equal(t, exitOK, code, errs)
	code, out, _ = runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitOK, code, out)
	code, _, _ = runCLI(t, "", "audit", "forget")
	require.Equal(t, exitUsage, code)
}

// TestDemoCordonErrors: no usable backend and an --audit FILE that cannot
// be written are cordon errors (125), said once before any step; they
// played every step, blocked or failing, and exited 1.
func TestDemoCordonErrors(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(dir, "state"))
	t.Setenv(detect.EnvSandbox, "")
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink("real.jsonl", link))
	unusable := "seatbelt"
	if runtime.GOOS == "darwin" {
		unusable = "bwrap"
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--backend", unusable}, "cordon demo: backend " + unusable + " is not usable here: "},
		{[]string{"--audit", link}, "cordon demo: --audit " + link + ": "},
	} {
		code, out, errs := runCLI(t, "", append([]string{"demo"}, tt.args...)...)
		require.Equal(t, exitCordonError, code, "%v: %s%s", tt.args, out, errs)
		require.Empty(t, out, "no step may be played")
		require.True(t, strings.HasPrefix(errs, tt.want), errs)
		require.Equal(t, 1, strings.Count(errs, "\n"), errs)
	}
	require.NoFileExists(t, filepath.Join(dir, "real.jsonl"))
}
