//go:build linux || darwin

package launcher

import (
	"os"
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

// The helper, started as the agent starts its prefix, runs the command
// without the named variables and with the rest of the environment,
// and so does what the command starts.
func TestAgentShellDropsKeys(t *testing.T) {
	cmd := exec.Command(os.Args[0], agentShellArg+"=CORDON_T_KEY,CORDON_T_OTHER", `echo "${CORDON_T_KEY-unset} $CORDON_T_KEEP"; sh -c 'echo "${CORDON_T_KEY-unset}"'`)
	cmd.Env = append(os.Environ(), "CORDON_T_KEY=secret", "CORDON_T_KEEP=kept")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := string(out); got != "unset kept\nunset\n" {
		t.Errorf("output %q, want the key unset in both and the rest kept", got)
	}
}
