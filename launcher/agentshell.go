//go:build linux || darwin

package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/policy"
)

// agentShellArg runs this program as the shell prefix of an agent CLI
// inside the sandbox (Claude Code's CLAUDE_CODE_SHELL_PREFIX): argv
// agentShellArg=NAME,NAME... COMMAND. It drops the named variables, the
// agent's own key, from its environment and runs COMMAND with the shell
// the agent runs its commands in, so that the key stays with the agent
// and reaches none of the commands it runs, not even in the agent's own
// /proc/<pid>/environ (apartFromAgent; docs/threat-model.md, "Secrets in
// the environment"). The flag starts with a dash: Claude
// Code quotes the prefix up to its last " -" as the program's path and
// passes the rest as it is.
const agentShellArg = "--cordon-agent-shell"

func init() {
	if len(os.Args) >= 3 {
		if names, ok := strings.CutPrefix(os.Args[1], agentShellArg+"="); ok {
			os.Exit(agentShellMain(strings.Split(names, ","), os.Args[2:]))
		}
	}
}

func agentShellMain(drop, command []string) int {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(drop, name)
	})
	sh := agentShell(os.Getenv)
	apartFromAgent()
	err := syscall.Exec(sh, []string{sh, "-c", strings.Join(command, " ")}, env)
	fmt.Fprintf(os.Stderr, "cordon: %s: run %s: %v\n", agentShellArg, sh, err)
	return 126
}

// agentShell is the shell Claude Code runs its commands in, as it picks
// it: CLAUDE_CODE_SHELL, else SHELL when it is bash or zsh, else bash
// from PATH, else /bin/sh. The command it hands the prefix is written for
// that shell (bash or zsh: it sources the shell's snapshot).
func agentShell(getenv func(string) string) string {
	for _, v := range []string{getenv("CLAUDE_CODE_SHELL"), getenv("SHELL")} {
		if b := filepath.Base(v); filepath.IsAbs(v) && (b == "bash" || b == "zsh") {
			if fi, err := os.Stat(v); err == nil && fi.Mode().IsRegular() {
				return v
			}
		}
	}
	if p, err := exec.LookPath("bash"); err == nil && filepath.IsAbs(p) {
		return p
	}
	return "/bin/sh"
}

// AgentShellPrefix is the value of an agent's shell prefix variable
// (workspace.AgentCLI.ShellPrefix) that runs each of its commands
// without the variables keys: this program, by its real path, which the
// sandbox can read and execute but not replace (Spec.Executables keeps
// it read-only), with agentShellArg. It fails when the sandbox cannot run
// this program, or when its path holds " -", which the agent would split
// the prefix at.
func AgentShellPrefix(canon *policy.Canonical, keys []string) (string, error) {
	exe, err := selfHelper(canon)
	if err != nil {
		return "", err
	}
	if strings.Contains(exe, " -") {
		return "", fmt.Errorf("%s: the path holds \" -\", where the agent splits its shell prefix", exe)
	}
	return exe + " " + agentShellArg + "=" + strings.Join(keys, ","), nil
}
