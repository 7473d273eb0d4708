package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/shellquote"
)

// Rewrite is how a Bash call runs inside cordon's sandbox
// ('cordon hook claude-code --sandbox-bash'): cordon's executable runs
// 'cordon run' with RunArgs, the flags that launch the policy the hook
// decided with.
type Rewrite struct {
	// Exe is cordon's executable; "" is this program's.
	Exe     string
	RunArgs []RunArg
}

// RunArg is one flag of 'cordon run' and its value.
type RunArg struct{ Flag, Value string }

// input returns tool_input with its command wrapped in 'cordon run', every
// other field kept as it was.
func (rw *Rewrite) input(input json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return nil, fmt.Errorf("tool_input is not an object: %w", err)
	}
	var command string
	if err := json.Unmarshal(fields["command"], &command); err != nil {
		return nil, fmt.Errorf("tool_input.command is not a string: %w", err)
	}
	wrapped, err := rw.Wrap(command)
	if err != nil {
		return nil, err
	}
	if fields["command"], err = marshalPlain(wrapped); err != nil {
		return nil, err
	}
	return marshalPlain(fields)
}

// Wrap is command rewritten to run inside 'cordon run', for any agent
// whose hooks may rewrite a shell call.
func (rw *Rewrite) Wrap(command string) (string, error) {
	exe := rw.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find the cordon executable: %w", err)
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
	}
	return rw.command(exe, command), nil
}

// command is the shell command that runs command under cordon. The
// original goes to the shell as one single-quoted word, so quotes, $,
// backticks, newlines and heredocs reach the inner shell untouched. The
// inner shell is bash when the host has it, because Claude Code's Bash
// tool speaks bash ([[ ]], arrays, brace expansion), and /bin/sh
// otherwise.
func (rw *Rewrite) command(exe, command string) string {
	shell := "/bin/sh"
	if fi, err := os.Stat("/bin/bash"); err == nil && fi.Mode().IsRegular() {
		shell = "/bin/bash"
	}
	words := []string{shellquote.Single(exe), "run", "--no-tty"}
	for _, a := range rw.RunArgs {
		words = append(words, a.Flag, shellquote.Single(a.Value))
	}
	words = append(words, "--", shell, "-c", shellquote.Single(command))
	return strings.Join(words, " ")
}
