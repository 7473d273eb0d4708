// Package guards holds the checks cordon runs before any permission rule:
// they are cheap, explainable and cannot be bypassed by rule order.
//
// # Workspace scope
//
// [Scope] resolves a tool's path the way the kernel will: relative to the
// workspace, following symlinks component by component (also a dangling
// final link, whose target a write would create), applying ".." after the
// links before it. Anything that cannot be resolved counts as outside.
// [GlobPrefix] gives the static directory of a glob, which is what must be
// inside the workspace before the pattern is ever expanded.
//
//	s, _ := guards.NewScope("/home/me/project")
//	p, inside, err := s.Resolve("../secrets.txt") // "/home/me/secrets.txt", false, nil
//
// # Cross-agent guard
//
// [CrossAgent] keeps one agent out of its siblings' directories under a
// shared agents root. A path is checked in both its lexical and its resolved
// form; a recursive tool aimed at an ancestor of the agents root counts as
// entering it; the agent's own directory is open and its parent's is
// read-only.
//
// # Shell classification
//
// [ClassifyShell] parses a command with mvdan.cc/sh and looks at every
// command it would run — through quotes, escapes, absolute paths, wrappers
// such as env or timeout, "sh -c" strings, eval, trap, scripts piped or fed
// to a shell or to source, subshells, substitutions and pipelines — for the
// few commands that are never acceptable (privilege escalation, rm -rf,
// mkfs and other disk wipers, writes onto devices or /proc/sysrq-trigger,
// stopping the machine). A
// command that does not parse is reported as such, so callers can deny it.
// Words that are only arguments (an echo, a grep pattern, a commit message)
// are not commands and are never matched. shell.go walks the parsed
// script, commands.go reads each command's words (wrappers, shells, rm,
// find), machine.go holds the commands that act on the machine: a new
// hard-denied command goes there.
package guards
