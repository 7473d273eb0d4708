package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/permission"
)

func pipeCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestDecideCommand(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name, in     string
		code         int
		action, rule string
	}{
		{"hard deny", `{"tool_use_id":"1","name":"bash","arguments":{"command":"sudo make install"}}`, 0, "DENY", permission.RuleHardDeny},
		{"outside", `{"tool_use_id":"2","name":"read_file","arguments":{"path":"../x"}}`, 0, "DENY", permission.RuleOutsideWorkspace},
		{"read", `{"tool_use_id":"3","name":"read_file","arguments":{"path":"x"}}`, 0, "ALLOW", permission.RuleReadAllow},
		{"malformed", `{"tool_use_id":`, exitCordonError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := pipeCLI(t, tt.in, "decide", "--workspace", ws)
			require.Equal(t, tt.code, code, errs)
			if tt.code != 0 {
				require.Contains(t, errs, "decode request")
				return
			}
			var d permission.Decision
			require.NoError(t, json.Unmarshal([]byte(out), &d), out)
			require.Equal(t, []string{tt.action, tt.rule}, []string{string(d.Action), d.RuleID})
		})
	}
	code, _, errs := pipeCLI(t, "", "decide")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "--workspace")
	code, _, errs = pipeCLI(t, "", "decide", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, errs, "Examples:")
}

func TestDemoAndAuditVerify(t *testing.T) {
	log := filepath.Join(t.TempDir(), "demo.jsonl")
	code, out, errs := pipeCLI(t, "", "demo", "--audit", log)
	require.Equal(t, exitOK, code, out+errs)
	for _, want := range []string{"path.read_allow", "approved", "rejected", "cancelled", "bash.hard_deny",
		"path.outside_workspace", "resolves to", "default.deny", "FAILED", "Every step went as scripted"} {
		require.Contains(t, out, want)
	}
	code, out, _ = pipeCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitOK, code, out)
	require.Contains(t, out, "30 records")

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, bytes.Replace(b, []byte("toolu_05"), []byte("toolu_99"), 1), 0o600))
	code, out, _ = pipeCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitFail, code)
	require.Contains(t, out, "record 13")
}
