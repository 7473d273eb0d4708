//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// hookCalls times 'cordon hook claude-code', the process Claude Code
// starts before each tool call, as it starts it: a payload on stdin, the
// answer on stdout. Three payloads (a Bash command the decider parses, a
// Read inside the workspace, a Read of a denied path), each with cordon's
// default audit log and with --no-audit, alternated, with the minimal Go
// launcher exec'ing /bin/true beside them for the floor of any Go hook.
func hookCalls(cfg config, cordon, golauncher string, env []string, ws string) error {
	payloads := []struct{ name, json string }{
		{"Bash `git status && ls -la | head`", `{"tool_name":"Bash","tool_input":{"command":"git status && ls -la | head"}}`},
		{"Read of a file in the workspace", `{"tool_name":"Read","tool_input":{"file_path":"` + ws + `/README.md"}}`},
		{"Read of ~/.ssh/id_ed25519 (denied)", `{"tool_name":"Read","tool_input":{"file_path":"/root/.ssh/id_ed25519"}}`},
	}
	type variant struct {
		label string
		args  []string
		in    string
		s     series
	}
	var vs []*variant
	for _, p := range payloads {
		in := strings.Replace(p.json, "{", `{"session_id":"bench","hook_event_name":"PreToolUse","cwd":"`+ws+`",`, 1)
		base := []string{cordon, "hook", "claude-code", "--workspace", ws}
		vs = append(vs, &variant{label: p.name, args: base, in: in},
			&variant{label: p.name + ", --no-audit", args: append(base, "--no-audit"), in: in})
	}
	vs = append(vs, &variant{label: "(e') minimal Go launcher → /bin/true", args: []string{golauncher, "/bin/true"}})
	for i := range cfg.hookN {
		for j := range vs {
			v := vs[(i+j)%len(vs)]
			cmd := exec.Command(v.args[0], v.args[1:]...)
			cmd.Stdin = strings.NewReader(v.in)
			var out bytes.Buffer
			cmd.Stdout = &out
			r, err := sample(cmd, env, ws)
			if err != nil {
				return fmt.Errorf("%s: %w", v.label, err)
			}
			if v.in != "" && !strings.Contains(out.String(), "permissionDecision") {
				return fmt.Errorf("%s: no decision in %q", v.label, out.String())
			}
			v.s.add(r)
		}
	}
	fmt.Printf("\n== hook calls: %d rounds, order rotated each round (cordon hook claude-code, payload on stdin)\n%-44s %6s %9s %9s %9s\n", cfg.hookN, "", "n", "median", "p95", "min")
	for _, v := range vs {
		v.s.print(v.label)
	}
	return nil
}
