//go:build linux || darwin

package launcher

import (
	"os/exec"
	"strings"
	"testing"
)

// The helper runs the agent's command in the shell the agent picked, and
// falls back to bash (the command is written for bash or zsh) when the
// environment names none it can use.
func TestAgentShell(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CLAUDE_CODE_SHELL": bash, "SHELL": "/bin/sh"}, bash},
		{map[string]string{"SHELL": bash}, bash},
		{map[string]string{"SHELL": "/bin/sh"}, bash},
		{map[string]string{"SHELL": "bash"}, bash},                  // not absolute
		{map[string]string{"SHELL": "/nonexistent/bash"}, bash},     // absent
		{map[string]string{"CLAUDE_CODE_SHELL": "/bin/dash"}, bash}, // not bash or zsh
	} {
		if got := agentShell(env(c.env)); got != c.want && !strings.HasSuffix(got, "/bash") {
			t.Errorf("agentShell(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}
