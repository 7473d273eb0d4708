package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/launcher"
)

// TestRunSandboxExecFailureIs125: when sandbox-exec could not apply the
// profile, cordon run exits 125 with the cause, not with sandbox-exec's 65
// as if it were the command's status; a command sandbox-exec could not
// start is 126, as for any command that cannot be executed.
func TestRunSandboxExecFailureIs125(t *testing.T) {
	var stderr bytes.Buffer
	e := &env{stderr: &stderr}
	err := fmt.Errorf("%w: the profile does not compile on this macOS (…: %q)", launcher.ErrProfile, "sandbox-exec: unbound variable: TIOCSTI")
	require.Equal(t, exitCordonError, startFailure(e, "make", err))
	require.Contains(t, stderr.String(), "sandbox-exec could not apply the profile")
	require.Contains(t, stderr.String(), "unbound variable: TIOCSTI")

	stderr.Reset()
	require.Equal(t, exitNotExec, startFailure(e, "tool", &exec.Error{Name: "/x/tool", Err: fmt.Errorf("sandbox-exec applied the profile but could not start it")}))
}
