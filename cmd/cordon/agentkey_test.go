package main

import (
	"bytes"
	"os"
	"path/filepath"
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
	env := agentShellPrefix([]string{"ANTHROPIC_API_KEY=k", "CLAUDE_CODE_SHELL_PREFIX=/usr/bin/logger"}, comp, &stderr)
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	want := "CLAUDE_CODE_SHELL_PREFIX=" + exe + " --cordon-agent-shell=ANTHROPIC_API_KEY,ANTHROPIC_AUTH_TOKEN,CLAUDE_CODE_OAUTH_TOKEN"
	if len(env) != 2 || env[1] != want {
		t.Errorf("env = %q, want the key and %q", env, want)
	}
	if !strings.Contains(stderr.String(), "CLAUDE_CODE_SHELL_PREFIX replaced") {
		t.Errorf("stderr %q does not say the caller's prefix was replaced", stderr.String())
	}
	if env := agentShellPrefix([]string{"HOME=/h"}, comp, &stderr); len(env) != 1 {
		t.Errorf("without the key: env = %q, want it unchanged", env)
	}
	stderr.Reset()
	c := workspace.AgentCLIs["codex"]
	comp = &workspace.Composed{Canonical: canon, AgentName: c.Name, AgentKeys: c.Keys, KeySetting: c.KeySetting}
	if env := agentShellPrefix([]string{"OPENAI_API_KEY=k"}, comp, &stderr); len(env) != 1 || !strings.Contains(stderr.String(), "shell_environment_policy") {
		t.Errorf("codex: env = %q, stderr %q: want it unchanged and the setting named", env, stderr.String())
	}
}
