package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// cordon run --agent claude-code makes cordon Claude Code's shell prefix,
// naming the keys to drop, when the agent's key is set; it replaces the
// caller's prefix, saying so, and sets nothing without a key.
func TestAgentShellPrefixEnv(t *testing.T) {
	canon, err := policy.Canonicalize(policy.FsSandboxPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	a := workspace.AgentCLIs["claude-code"]
	comp := &workspace.Composed{Canonical: canon, AgentName: a.Name, AgentKeys: a.Keys, ShellPrefix: a.ShellPrefix}
	var stderr bytes.Buffer
	env, _ := agentKey([]string{"ANTHROPIC_API_KEY=k", "CLAUDE_CODE_SHELL_PREFIX=/usr/bin/logger"}, []string{"claude"}, comp, &stderr)
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	want := "CLAUDE_CODE_SHELL_PREFIX=" + exe + " --cordon-agent-shell=ANTHROPIC_API_KEY,ANTHROPIC_AUTH_TOKEN,CLAUDE_CODE_OAUTH_TOKEN"
	if len(env) != 2 || env[1] != want {
		t.Errorf("env = %q, want the key and %q", env, want)
	}
	if !strings.Contains(stderr.String(), "CLAUDE_CODE_SHELL_PREFIX replaced") {
		t.Errorf("stderr %q does not say the caller's prefix was replaced", stderr.String())
	}
	if env, _ := agentKey([]string{"HOME=/h"}, []string{"claude"}, comp, &stderr); len(env) != 1 {
		t.Errorf("without the key: env = %q, want it unchanged", env)
	}
	stderr.Reset()
	c := workspace.AgentCLIs["codex"]
	keyArgs := []string{"-c", `shell_environment_policy.exclude=["OPENAI_API_KEY"]`}
	comp = &workspace.Composed{Canonical: canon, AgentName: c.Name, AgentKeys: c.Keys, KeySetting: c.KeySetting, AgentCommand: c.Command, KeyArgs: keyArgs}
	env, args := agentKey([]string{"OPENAI_API_KEY=k"}, []string{"/opt/bin/codex", "exec", "hi"}, comp, &stderr)
	if want := []string{"/opt/bin/codex", keyArgs[0], keyArgs[1], "exec", "hi"}; len(env) != 1 || !slices.Equal(args, want) || stderr.Len() > 0 {
		t.Errorf("codex: env = %q, args = %q, stderr %q: want env unchanged, args %q, nothing said", env, args, stderr.String(), want)
	}
	// Codex started through a shell: cordon cannot reach its command line.
	env, args = agentKey([]string{"OPENAI_API_KEY=k"}, []string{"sh", "-c", "codex exec hi"}, comp, &stderr)
	if len(env) != 1 || len(args) != 3 || !strings.Contains(stderr.String(), "shell_environment_policy") {
		t.Errorf("codex through sh: env = %q, args = %q, stderr %q: want both unchanged and the setting named", env, args, stderr.String())
	}
	stderr.Reset()
	env, args = agentKey([]string{"OPENAI_API_KEY=k"}, []string{"env", "-u", "NO_PROXY", "-i", "A=b", "codex", "exec"}, comp, &stderr)
	if want := []string{"env", "-u", "NO_PROXY", "-i", "A=b", "codex", keyArgs[0], keyArgs[1], "exec"}; !slices.Equal(args, want) || stderr.Len() > 0 {
		t.Errorf("codex through env: args = %q, stderr %q: want %q, nothing said", args, stderr.String(), want)
	}
	for _, argv := range [][]string{{"env", "-S", "codex exec"}, {"env", "-u"}, {"env", "A=b"}, {"env", "-u", "codex"}, {"codex-wrapper", "exec"}} {
		if i := agentIndex(argv, "codex"); i != -1 {
			t.Errorf("agentIndex(%q) = %d, want -1", argv, i)
		}
	}
	if _, args := agentKey([]string{"HOME=/h"}, []string{"codex", "exec"}, comp, &stderr); len(args) != 2 || stderr.Len() > 0 {
		t.Errorf("codex without the key: args = %q, stderr %q: want both unchanged", args, stderr.String())
	}
}
