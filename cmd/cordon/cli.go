package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/launcher"
)

// Exit statuses shared by every subcommand (docs/design.md, section 4):
// usage errors (an unknown flag, a bad flag value, a missing or extra
// argument) are 2 everywhere, cordon's own errors 125; run passes on its
// command's status, and detect, verify, demo and audit verify answer 0 or 1.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitCordonError = 125
	exitNotExec     = 126
	exitNotFound    = 127
)

// env carries a subcommand's name and standard streams; no package-level
// state.
type env struct {
	name           string   // "run", "audit verify": what messages start with
	cmd            *command // the command running, for its usage
	root           *command // the table dispatch started from (commands)
	stdin          io.Reader
	stdout, stderr io.Writer
}

// action runs a command once its flags are parsed, with its arguments.
type action func(ctx context.Context, e *env, args []string) int

// A command is one subcommand, declared once: what 'cordon --help' says of
// it, its usage line, its help, its flags and how many arguments it takes.
// run parses every command the same way.
type command struct {
	name    string // the words after "cordon": "run", "audit verify"
	summary string // one line in 'cordon --help' (top-level commands)
	usage   string // the synopsis after "cordon NAME"; a group's comes from its subs
	help    string // what it does, examples, exit status; printed before the flags
	// minArgs and maxArgs bound the arguments (maxArgs < 0: no bound);
	// missing says what is missing when there are too few.
	minArgs, maxArgs int
	missing          string
	// anyOrder lets flags follow arguments too (not for run, whose
	// arguments are a command line of their own).
	anyOrder bool
	// setup registers the flags on fs and returns what runs with them;
	// a group (subs) has none.
	setup func(fs *flag.FlagSet) action
	subs  []*command
}

// commands is the table of every command 'cordon' has.
var commands = &command{
	help: `cordon runs an AI coding agent's subprocesses inside a kernel sandbox,
decides tool calls before they run, and proves the sandbox holds.
`,
	subs: []*command{runCommand, profileCommand, explainCommand, detectCommand, verifyCommand,
		decideCommand, hookCommand, initCommand, doctorCommand, auditCommand, demoCommand, versionCommand, completionCommand},
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatch(ctx, &env{stdin: stdin, stdout: stdout, stderr: stderr, root: commands}, commands, args)
}

// dispatch runs c with args: a group picks its sub by the first argument,
// a command parses its flags and checks its arguments. --help (-h, -help,
// and for a group 'help', or 'help CMD' for CMD's) prints help on stdout,
// exit 0.
func dispatch(ctx context.Context, e *env, c *command, args []string) int {
	e.name, e.cmd = c.name, c
	if c.subs != nil {
		return dispatchGroup(ctx, e, c, args)
	}
	fs := newFlagSet(c)
	act := c.setup(fs)
	var bad error // a flag's value that Set refused, as the message says it
	fs.VisitAll(func(f *flag.Flag) { f.Value = checked{f.Value, f.Name, &bad} })
	rest, err := parseFlags(fs, args, c.anyOrder)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(e.stdout, c)
		return exitOK
	case bad != nil:
		return usageError(e, "%v", bad)
	case err != nil:
		msg := flagError(err)
		if name, ok := strings.CutPrefix(msg, "unknown flag --"); ok {
			msg += didYouMean(name, flagNames(fs), "--")
		}
		return usageError(e, "%s", msg)
	case len(rest) < c.minArgs:
		return usageError(e, "%s", c.missing)
	case c.maxArgs >= 0 && len(rest) > c.maxArgs:
		return usageError(e, "unexpected argument %q", rest[c.maxArgs])
	}
	return act(ctx, e, rest)
}

func dispatchGroup(ctx context.Context, e *env, c *command, args []string) int {
	if len(args) == 0 {
		return usageError(e, "name a command: %s", strings.Join(subNames(c), ", "))
	}
	switch a := args[0]; a {
	case "--version", "-version", "-v":
		if c == commands {
			return dispatch(ctx, e, versionCommand, args[1:])
		}
		return usageError(e, "unknown flag %s", a)
	case "-h", "-help", "--help":
		printHelp(e.stdout, c)
		return exitOK
	case "help":
		// 'help CMD...' prints CMD's help; 'help' alone, this group's.
		target := c
		for _, w := range args[1:] {
			next := subNamed(target, w)
			switch {
			case target.subs == nil:
				return usageError(e, "help: unexpected argument %q", w)
			case next == nil:
				return usageError(e, "help: unknown command %q: want %s", w, strings.Join(subNames(target), ", "))
			}
			target = next
		}
		printHelp(e.stdout, target)
		return exitOK
	default:
		if s := subNamed(c, a); s != nil {
			return dispatch(ctx, e, s, args[1:])
		}
		if strings.HasPrefix(a, "-") {
			return usageError(e, "unknown flag %s", a)
		}
		return usageError(e, "unknown command %q%s: want %s", a, didYouMean(a, subNames(c), ""), strings.Join(subNames(c), ", "))
	}
}

func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // dispatch prints the errors, in its own words
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args; with anyOrder, flags may come after arguments
// as well as before them ("--" still ends the flags).
func parseFlags(fs *flag.FlagSet, args []string, anyOrder bool) ([]string, error) {
	if !anyOrder {
		err := fs.Parse(args)
		return fs.Args(), err
	}
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		if len(args) > fs.NArg() && args[len(args)-fs.NArg()-1] == "--" {
			return append(rest, fs.Args()...), nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// checked wraps a flag's value so that a value it refuses is reported as
// --NAME "VALUE": REASON.
type checked struct {
	flag.Value
	name string
	bad  *error
}

func (c checked) Set(s string) error {
	err := c.Value.Set(s)
	if err != nil && *c.bad == nil {
		reason := err.Error()
		switch {
		case c.IsBoolFlag():
			reason = "want true or false"
		case reason == "parse error": // the flag package's, for numbers
			reason = "want a number"
		}
		*c.bad = fmt.Errorf("--%s %q: %s", c.name, s, reason)
	}
	return err
}

func (c checked) IsBoolFlag() bool {
	b, ok := c.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagError words the flag package's own errors as cordon's.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "--" + name + " needs a value"
	}
	return msg
}

// usageError prints a usage error and the command's usage on stderr;
// exit 2.
func usageError(e *env, format string, a ...any) int {
	errorf(e, exitUsage, format, a...)
	fmt.Fprintf(e.stderr, "%s(see '%s --help')\n", usageLines(e.cmd, "usage: "), strings.TrimSpace("cordon "+e.cmd.name))
	return exitUsage
}

// errorf prints a message naming the command and returns code. An error
// that starts with the command's own verb ("verify LOG: ..." under audit
// verify) loses it rather than saying it twice. The message is escaped
// (shown.String): errors and notes name paths a sandbox or a repository
// chose, and nothing of theirs reaches the user's terminal raw, a
// newline (a line of its own, looking like cordon's) included.
func errorf(e *env, code int, format string, a ...any) int {
	msg := shown.String(strings.TrimRight(fmt.Sprintf(format, a...), "\n"))
	if verb := lastWord(e.name); verb != "" {
		if rest, ok := strings.CutPrefix(msg, verb+": "); ok {
			msg = rest
		} else if rest, ok := strings.CutPrefix(msg, verb+" "); ok && !strings.HasPrefix(rest, "--") {
			msg = rest
		}
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", strings.TrimSpace("cordon "+e.name), msg)
	return code
}

// shownLines is text with each line escaped (shown.String), its line
// breaks and tabs kept: a tab moves the cursor and nothing else, and the
// settings files a diff shows indent with them.
func shownLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		parts := strings.Split(body, "\t")
		for j, p := range parts {
			parts[j] = shown.String(p)
		}
		lines[i] = strings.Join(parts, "\t")
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// printHelp prints c's usage, help and flags.
func printHelp(w io.Writer, c *command) {
	fmt.Fprint(w, usageLines(c, "Usage: "))
	fmt.Fprintf(w, "\n%s", c.help)
	if c.subs != nil {
		fmt.Fprintln(w, "\nCommands:")
		for _, s := range c.subs {
			if s.summary != "" {
				fmt.Fprintf(w, "  %-12s %s\n", lastWord(s.name), s.summary)
			}
		}
		fmt.Fprintf(w, "\nRun '%s COMMAND --help' for a command's flags and examples.\n",
			strings.TrimSpace("cordon "+c.name))
		return
	}
	fs := newFlagSet(c)
	c.setup(fs)
	sep := "\nFlags:\n"
	fs.VisitAll(func(f *flag.Flag) {
		// As flag.PrintDefaults, but spelt --name, as everywhere else.
		arg, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "%s  --%s", sep, strings.TrimSpace(f.Name+" "+arg))
		sep = ""
		if f.DefValue != "" && f.DefValue != "false" {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "\n    \t%s\n", strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// usageLines are c's synopsis lines (a group's are its commands'), the
// first after prefix and the others aligned with it.
func usageLines(c *command, prefix string) string {
	var lines []string
	var walk func(*command)
	walk = func(c *command) {
		if c.subs == nil {
			// A synopsis of several lines goes on under its first word.
			head := "cordon " + c.name + " "
			lines = append(lines, strings.TrimSpace(head+strings.ReplaceAll(c.usage, "\n", "\n"+strings.Repeat(" ", len(head)))))
			return
		}
		for _, s := range c.subs {
			walk(s)
		}
	}
	if c.name == "" {
		lines = []string{"cordon COMMAND [FLAGS] [ARGS]"}
	} else {
		walk(c)
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			prefix = strings.Repeat(" ", len(prefix))
		}
		b.WriteString(prefix + strings.ReplaceAll(l, "\n", "\n"+strings.Repeat(" ", len(prefix))) + "\n")
	}
	return b.String()
}

// subNamed is c's command called name, or nil.
func subNamed(c *command, name string) *command {
	for _, s := range c.subs {
		if name == lastWord(s.name) {
			return s
		}
	}
	return nil
}

func subNames(c *command) []string {
	var names []string
	for _, s := range c.subs {
		names = append(names, lastWord(s.name))
	}
	return names
}

func lastWord(s string) string {
	return s[strings.LastIndexByte(s, ' ')+1:]
}

// onOff is a flag that takes on or off.
type onOff bool

func (o *onOff) Set(s string) error {
	switch s {
	case "on":
		*o = true
	case "off":
		*o = false
	default:
		return errors.New("want on or off")
	}
	return nil
}

func (o *onOff) String() string {
	if o != nil && bool(*o) {
		return "on"
	}
	return "off"
}

// backendFlag registers --backend, auto by default, for run, the one
// command that takes none (no sandbox).
func backendFlag(fs *flag.FlagSet, b *launcher.Backend, usage string) {
	*b = launcher.BackendAuto
	fs.Var(b, "backend", usage)
}

// sandboxFlag registers --backend, auto by default, for a command that
// checks or uses a real sandbox: none is refused as the flag's value, and
// its error lists only the names the command takes; whyNotNone says why
// none is not one of them.
func sandboxFlag(fs *flag.FlagSet, b *launcher.Backend, usage, whyNotNone string) {
	*b = launcher.BackendAuto
	fs.Var(sandboxBackend{b, whyNotNone}, "backend", usage)
}

// sandboxBackend is a --backend that refuses none.
type sandboxBackend struct {
	*launcher.Backend
	whyNotNone string
}

func (s sandboxBackend) Set(v string) error {
	const want = "want auto, bwrap, native, landlock or seatbelt"
	var b launcher.Backend
	if err := b.Set(v); err != nil {
		return errors.New(want)
	}
	if b == launcher.BackendNone {
		return fmt.Errorf("%s (%s)", want, s.whyNotNone)
	}
	*s.Backend = b
	return nil
}
