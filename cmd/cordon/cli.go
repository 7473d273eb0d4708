package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit statuses shared by every subcommand (docs/design.md, section 4).
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitCordonError = 125
	exitNotExec     = 126
	exitNotFound    = 127
)

// env carries a subcommand's standard streams; no package-level state.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) int
}

// commands is filled by each subcommand's file in its init function, so
// that each lives in a file of its own.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, e *env, args []string) int) {
	commands[name] = command{summary: summary, run: run}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cordon: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "cordon runs an AI coding agent's subprocesses inside a kernel sandbox,")
	fmt.Fprintln(w, "decides tool calls before they run, and proves the sandbox holds.")
	fmt.Fprintln(w, "\nUsage: cordon COMMAND [FLAGS] [ARGS]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'cordon COMMAND --help' for a command's flags and examples.")
}

// errorf prints a cordon error naming its subcommand and returns code.
func errorf(e *env, code int, format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintf(e.stderr, "cordon: %s\n", strings.TrimRight(msg, "\n"))
	return code
}
