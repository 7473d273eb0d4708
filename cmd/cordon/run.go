package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/timing"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/tty"
	"github.com/cordon-sandbox/cordon/workspace"
)

var runCommand = &command{
	name: "run", summary: "run a command inside the sandbox",
	usage:   "[POLICY] [FLAGS] -- CMD [ARG]...",
	help:    runHelp + "\n" + policyHelp,
	minArgs: 1, maxArgs: -1, missing: "no command given",
	setup: func(fs *flag.FlagSet) action {
		o := &runOpts{}
		o.register(fs)
		return o.run
	},
}

const runHelp = `Runs CMD inside a kernel sandbox built from POLICY: on Linux cordon's own
(native) where it is usable, else bubblewrap, else (no user namespaces
here: a container, a CI runner) Landlock, with a note saying so; Seatbelt
on macOS. With no usable backend it refuses to run (exit 125) unless you
pass --backend none. Under landlock, with an allowlist, cordon decides
every connect (to its proxy only), and what CMD leaves running is killed
when it ends.

Examples:
  cordon run --workspace . -- sh -c 'make test'
  cordon run --workspace . --allow-domain @npm -- npm install
  cordon run --deny $HOME/.ssh --restrict-writes --writable $PWD -- ./agent
  cordon run --agent claude-code -- claude     (the agent itself inside; docs/agents.md)

The command gets your environment without the variables whose names mark
a secret (*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *CREDENTIAL*, *_AUTH*,
AWS_*, SSH_AUTH_SOCK, GPG_AGENT_INFO, DBUS_SESSION_BUS_ADDRESS); cordon
names on stderr those it withheld. --env NAME passes one (as does a policy
file's "env": [...]), --agent NAME its own API key, --inherit-env all.
An empty path (--workspace "", an unset variable) is a usage error.

Exit status: the command's; 128+N if it died of signal N; 125 for a cordon
error (bad policy, no backend, macOS: sandbox-exec could not apply the
profile); 126 not executable or denied; 127 not found; 2, before anything
runs, for bad usage (an unknown flag, a bad flag value, no CMD).
Inside the sandbox CORDON_SANDBOX names the backend.

On a terminal (stdin or stdout is one, or --tty) the command gets a
terminal of its own, as with ssh -t: cordon relays between it and yours,
with yours in raw mode until the command ends. Ctrl-C, Ctrl-Z, resizes
and /dev/tty work inside as they do outside, and nothing inside can type
into your terminal or read from it. SIGTERM sent to cordon goes to the
command, SIGHUP hangs up its terminal; the sandbox ends with cordon.

Your terminal itself never enters the sandbox. On stderr alone (cordon run
... </dev/null >log), or with --no-tty, the command writes to a pipe that
cordon copies to it, and reads /dev/null where stdin was the terminal;
screen modes the command switched on and left on (alternate screen, mouse
reporting, hidden cursor, bracketed paste, ...) are switched off when it
ends, as they are after a terminal of its own.

Descriptors 0-2 must be streams: a directory, an O_PATH handle, a pidfd,
a namespace or other anonymous-inode handle, a network, datagram or
unconnected socket, a block device or a character device other than
/dev/null, zero, full, random and urandom is refused (exit 125, naming the
descriptor). A regular file the command could reopen through
/proc/self/fd for more than the redirection gives and the policy allows
(< ~/.bashrc: writing it) reaches it through a pipe cordon copies.

Otherwise (or with --no-tty), through the native backend (what auto
takes on Linux where it is usable) cordon stays as the sandbox's parent:
signals go on to the command and the sandbox ends with cordon. Through
bwrap cordon execs bwrap in its own place: the pid you started is the
sandbox's, and the sandbox ends with the process that started cordon
(under nohup, cordon stays and the sandbox outlives it).

With --audit FILE, cordon appends a "launch" record (command, directory,
policy, backend, network) to the keyed audit log FILE before it starts the
sandbox, and FILE and FILE.head are read-only inside it; 'cordon audit
verify FILE' checks the log. A FILE that is or lies under a symlink, or is
not a regular file of yours, is refused.

With --allow-domain, the sandbox reaches the allowed hosts through a
proxy cordon runs for it (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point at
it inside) and nothing else; each refused host is named once on stderr
with the flag that would allow it, and with --audit every connection
attempt is recorded. --network on is the host's whole network instead.

Protected names that do not exist yet (.vscode, .envrc, ...) stay
absent: the sandbox cannot make them, and cordon makes nothing in the
project for them. A --writable path that does not exist yet is made
before the launch (a file, or a directory when spelled with a trailing
slash or when a root lies below it), and stays.
`

// runOpts are run's flags.
type runOpts struct {
	pf                   policyFlags
	backend              launcher.Backend
	network              onOff
	tty, noTty, cleanEnv bool
	inheritEnv           bool
	auditPath            string
	envs                 []string
}

func (o *runOpts) register(fs *flag.FlagSet) {
	o.pf.register(fs)
	backendFlag(fs, &o.backend, "sandbox `BACKEND`: auto, bwrap, native, landlock, seatbelt or none (unconfined)")
	fs.Var(&o.network, "network", "network access: `on|off`, on being the host's whole network; see --allow-domain for a list of hosts")
	fs.BoolVar(&o.tty, "tty", false, "give the command a terminal of its own even when stdin and stdout are not terminals")
	fs.BoolVar(&o.noTty, "no-tty", false, "never give the command a terminal of its own: it gets cordon's stdin, stdout and stderr as they are")
	pathVar(fs, &o.auditPath, "audit", "", "record the launch in the audit log `FILE` (in a directory that exists), read-only inside the sandbox")
	fs.BoolVar(&o.cleanEnv, "clean-env", false, "pass only PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TMPDIR, SHELL and --env")
	fs.BoolVar(&o.inheritEnv, "inherit-env", false, "pass the whole environment, secrets included (by default variables whose names mark a secret are withheld)")
	fs.Func("env", "pass `KEY` from the environment although its name marks a secret, or set KEY=VAL (repeatable)", func(s string) error {
		if s == "" || s[0] == '=' {
			return errors.New("want KEY or KEY=VAL")
		}
		o.envs = append(o.envs, s)
		return nil
	})
}

func (o *runOpts) run(ctx context.Context, e *env, args []string) int {
	if o.tty && o.noTty {
		return usageError(e, "--tty and --no-tty: pick one")
	}
	if o.cleanEnv && o.inheritEnv {
		return usageError(e, "--clean-env and --inherit-env: pick one")
	}
	if args[0] == "" {
		return usageError(e, "the command is empty: name the program to run after --")
	}
	timing.Mark("run", "go start, flags")
	detected := make(chan struct{})
	if o.backend != launcher.BackendNone {
		// Read the detection cache (or probe) while the policy is built;
		// Start waits for this same result.
		go func() {
			defer close(detected)
			detect.Detect(ctx, string(o.backend))
			timing.Mark("run", "detection")
		}()
	} else {
		close(detected)
	}
	comp, log, code := o.compose(e, args)
	if comp == nil {
		// Wait for the probe: one cut short by cordon's exit leaves the
		// directory it made behind (seen in /tmp, one per refused launch).
		<-detected
		return code
	}
	timing.Mark("run", "workspace, policy")
	cmd, netDone := o.command(e, comp, log, args)
	// Where it can, Exec replaces cordon with the sandbox: its pid, its
	// signals and its exit status become the sandbox's. Otherwise it runs
	// it as a child and passes signals on. From here on SIGTERM ends
	// cordon as it would the sandbox (a launch that dies half-way leaves
	// nothing in the project to clean up), not just main's context.
	signal.Reset(syscall.SIGTERM)
	if ctx.Err() != nil {
		<-detected
		return 128 + int(syscall.SIGTERM)
	}
	if o.backend == launcher.BackendAuto {
		// The verdict Start uses (cached): said once, before the command.
		if r := detect.Detect(ctx, string(o.backend)); r.Fallback {
			fmt.Fprintln(e.stderr, "cordon run: note: user namespaces are unavailable here, so the sandbox is the landlock backend (no private /tmp, host processes visible; see cordon detect)")
		}
	}
	err := cmd.Exec()
	netDone()
	timing.Mark("run", "done")
	var st *launcher.ExitStatus
	if errors.As(err, &st) {
		return st.Code
	}
	if cmd.ProcessState == nil {
		return startFailure(e, args[0], err)
	}
	return exitStatus(e, cmd, err)
}

// compose opens the audit log, builds the policy and records the launch;
// on failure it returns a nil policy and the exit status.
func (o *runOpts) compose(e *env, args []string) (*workspace.Composed, *audit.Log, int) {
	// The audit log is opened first: its files join the composition as
	// paths the sandbox must not write.
	var log *audit.Log
	var protect []string
	if o.auditPath != "" {
		var err error
		if log, err = audit.OpenUser(o.auditPath, ""); err == nil {
			err = log.Check()
		}
		if err != nil {
			return nil, nil, errorf(e, exitCordonError, "--audit: %v", err)
		}
		protect = log.Protect()
	}
	o.pf.hostNetwork = bool(o.network)
	if err := o.pf.prepareAgent(os.Getenv("HOME")); err != nil {
		return nil, nil, errorf(e, exitCordonError, "%v", err)
	}
	comp, err := o.pf.compose(protect)
	if err != nil {
		return nil, nil, composeFailed(e, err)
	}
	if comp.Network != nil && o.network {
		return nil, nil, errorf(e, exitCordonError, "--network on and a domain allowlist (%s): --network on is the host's whole network; drop it to let the sandbox reach only the allowed hosts",
			strings.Join(comp.Network.AllowText(), " "))
	}
	printNotes(e, comp.Canonical.Notes())
	if ws, _ := filepath.Abs(o.pf.workspace); o.pf.workspace != "" && comp.Workspace != filepath.Clean(ws) {
		// Allowed, but said: the sandbox gets the directory the link
		// pointed at when the policy was built, not whatever it points at
		// later (the launch checks that).
		fmt.Fprintf(e.stderr, "cordon run: --workspace %s resolves to %s\n", shown.String(o.pf.workspace), shown.String(comp.Workspace))
	}
	if log != nil {
		if err := auditLaunch(log, comp, args, string(o.backend), bool(o.network)); err != nil {
			return nil, nil, errorf(e, exitCordonError, "--audit: %v", err)
		}
	}
	if w := o.pf.writesWarning(comp); w != "" && o.backend != launcher.BackendNone {
		fmt.Fprintf(e.stderr, "cordon run: warning: %s\n", w)
	}
	return comp, log, 0
}

// command is the launch of args under comp, and what to do once it has
// ended.
func (o *runOpts) command(e *env, comp *workspace.Composed, log *audit.Log, args []string) (*launcher.Cmd, func()) {
	env, withheld := o.environ(os.Environ(), comp)
	if len(withheld) > 0 {
		fmt.Fprintf(e.stderr, "cordon run: withheld from the sandbox, as their names mark a secret: %s (pass one with --env NAME, all with --inherit-env)\n", shown.String(strings.Join(withheld, " ")))
	}
	env, args = agentKey(env, args, comp, e.stderr)
	cmd := launcher.Command(comp.Policy, args[0], args[1:]...)
	cmd.Env = env
	cmd.Backend = string(o.backend)
	cmd.Network = bool(o.network)
	// Under landlock (no pid namespace) what the command leaves running
	// ends with it; cordon's own children are all the sandbox's.
	cmd.KillLeftovers = true
	done := func() {}
	if comp.Network != nil {
		cmd.NetPolicy = comp.Network
		cmd.NetEvent, done = netEvents(e, log, netproxy.NewLimiter(netproxy.AuditBurst, netproxy.AuditRate))
	}
	cmd.TmpDir, cmd.CacheDir = comp.TmpDir, comp.CacheDir
	cmd.UnixSockets = comp.UnixSockets
	cmd.IDs, cmd.Canonical = comp.Canonical.IDs(), comp.Canonical
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.Tty = o.tty || !o.noTty && (tty.IsTerminal(e.stdin) || tty.IsTerminal(e.stdout))
	return cmd, done
}

// environ is the sandbox's environment from env, the caller's, and the
// variables it withheld (names only), for the line that says so. By
// default every variable whose name marks a secret is withheld
// (launcher.WithholdSecrets) but those --env, the policy files and the
// agent CLI's preset name (comp.PassEnv); --clean-env keeps only the
// basics and --env, --inherit-env everything. KEY=VAL from --env sets a
// value, and comp.SetEnv what the caller has not set. What cordon adds
// itself later (TMPDIR, CORDON_SANDBOX, the proxy's, the caches') is no
// part of this.
func (o *runOpts) environ(env []string, comp *workspace.Composed) (out, withheld []string) {
	pass := append([]string(nil), comp.PassEnv...)
	var set []string
	for _, kv := range o.envs {
		if name, _, ok := strings.Cut(kv, "="); ok {
			set = append(set, kv)
			pass = append(pass, name)
		} else {
			pass = append(pass, kv)
		}
	}
	switch {
	case o.inheritEnv:
		out = env
	case o.cleanEnv:
		out = launcher.CleanEnv(env, o.envs)
	default:
		out, withheld = launcher.WithholdSecrets(env, pass)
	}
	out = slices.Clone(out)
	for _, kv := range comp.SetEnv {
		if name, _, _ := strings.Cut(kv, "="); !hasEnv(out, name) {
			out = append(out, kv)
		}
	}
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(o string) bool { return strings.HasPrefix(o, name+"=") })
		out = append(out, kv)
	}
	return out, withheld
}

// agentKey is env and args with what keeps the agent CLI's own key from
// the commands it runs, when env holds the key. Claude Code gets its
// shell prefix variable (comp.ShellPrefix) set to cordon's helper, which
// runs each command without the key (launcher.AgentShellPrefix); a
// prefix of the caller's is replaced, saying so, since it would hand the
// commands the key. Codex gets its own arguments (comp.KeyArgs) right
// after its executable's name, when args runs it (comp.AgentCommand).
// Where neither applies, a line says the commands see the key, naming
// the user's setting that keeps it (comp.KeySetting) when there is one.
// The agent starts either way.
func agentKey(env, args []string, comp *workspace.Composed, stderr io.Writer) ([]string, []string) {
	if !slices.ContainsFunc(comp.AgentKeys, func(k string) bool { return hasEnv(env, k) }) {
		return env, args
	}
	if comp.ShellPrefix == "" {
		if i := agentIndex(args, comp.AgentCommand); len(comp.KeyArgs) > 0 && i >= 0 {
			return env, slices.Concat(args[:i+1], comp.KeyArgs, args[i+1:])
		}
		if comp.KeySetting != "" {
			fmt.Fprintf(stderr, "cordon run: %s gives the commands it runs its key unless you set %s (docs/guide.md)\n", comp.AgentName, comp.KeySetting)
		}
		return env, args
	}
	prefix, err := launcher.AgentShellPrefix(comp.Canonical, comp.AgentKeys)
	if err != nil {
		fmt.Fprintf(stderr, "cordon run: the commands the agent runs see its key (%s): %s cannot be set: %v\n", strings.Join(comp.AgentKeys, ", "), comp.ShellPrefix, err)
		return env, args
	}
	if hasEnv(env, comp.ShellPrefix) {
		fmt.Fprintf(stderr, "cordon run: %s replaced by cordon's, which keeps the agent's key from the commands it runs\n", comp.ShellPrefix)
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, comp.ShellPrefix+"=") })
	return append(env, comp.ShellPrefix+"="+prefix), args
}

// agentIndex is the index in args of the agent's executable (its base
// name is command): args[0], or the program a leading env(1) runs after
// its -i, -u NAME and NAME=VALUE words; -1 when args runs something else
// or env with any other option, which cordon does not read.
func agentIndex(args []string, command string) int {
	i := 0
	if filepath.Base(args[0]) == "env" {
		i = envProgram(args)
	}
	if command == "" || i < 0 || i >= len(args) || filepath.Base(args[i]) != command {
		return -1
	}
	return i
}

// envProgram is the index of the program env(1) runs in args (args[0]
// is env), -1 when an option other than -i and -u comes first.
func envProgram(args []string) int {
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-u" || a == "--unset":
			i++
		case a == "-i" || a == "--ignore-environment" || strings.HasPrefix(a, "--unset="):
		case strings.HasPrefix(a, "-"):
			return -1
		case !strings.Contains(a, "="):
			return i
		}
	}
	return -1
}

// hasEnv reports whether env sets name.
func hasEnv(env []string, name string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

// auditLaunch records the launch, and the policy p it runs, in log; the
// log's files are read-only in p (Spec.Protect): the sandbox must not
// rewrite the record of its own launch, nor any other.
func auditLaunch(log *audit.Log, comp *workspace.Composed, argv []string, backend string, network bool) error {
	dir, _ := os.Getwd()
	rec := map[string]any{
		"argv": argv, "dir": dir, "policy": comp.Policy, "backend": backend, "network": network,
	}
	if comp.Network != nil {
		rec["networkPolicy"] = comp.Network
	}
	if len(comp.UnixSockets) > 0 {
		// Each socket handed over, by path and by the inode admitted.
		rec["unixSockets"] = comp.UnixSockets
	}
	return log.Append(audit.KindLaunch, "", rec)
}

// netEvents handles the proxy's decisions: each one goes to the audit
// log, when there is one, at a bounded rate (netproxy.AuditBurst, then
// netproxy.AuditRate a second); a refused host is named once on stderr,
// with the flag that would allow it, up to a bound. done, once the
// sandbox has ended, records how many decisions were left out of the
// log and says how many refusals were not named.
func netEvents(e *env, log *audit.Log, limit *netproxy.Limiter) (handle func(netproxy.Event), done func()) {
	refusals := netproxy.NewRefusals(e.stderr)
	failed := false
	handle = func(ev netproxy.Event) {
		if log != nil && limit.Allow() {
			if err := log.Append(audit.KindNetwork, "", ev); err != nil && !failed {
				failed = true // said once: the next would fail alike
				errorf(e, 0, "--audit: %v", err)
			}
		}
		refusals.Event(ev)
	}
	done = func() {
		if n := limit.Dropped(); log != nil && n > 0 {
			rec := map[string]any{"dropped": n, "reason": "more network decisions than the audit log takes at once or by the second"}
			if err := log.Append(audit.KindNetwork, "", rec); err != nil {
				errorf(e, 0, "--audit: %v", err)
			}
		}
		refusals.Close()
	}
	return handle, done
}

// startFailure maps a launch error onto the documented exit statuses.
func startFailure(e *env, name string, err error) int {
	var ee *exec.Error
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return errorf(e, exitNotFound, "%s: command not found in PATH", name)
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &ee):
		return errorf(e, exitNotFound, "%s: no such file", name)
	case errors.As(err, &ee):
		return errorf(e, exitNotExec, "%s: cannot execute: %v", name, ee.Err)
	case errors.Is(err, launcher.ErrNoBackend):
		errorf(e, exitCordonError, "%v", err)
		fmt.Fprintln(e.stderr, "(use --backend none to run without a sandbox, at your own risk)")
		return exitCordonError
	}
	return errorf(e, exitCordonError, "%v", err)
}

// exitStatus is the child's status, or 128+N when it died of signal N.
func exitStatus(e *env, cmd *launcher.Cmd, err error) int {
	st := cmd.ProcessState
	if st == nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	return shellStatus(st)
}

// shellStatus is st's status as a shell gives it: the exit code, or
// 128+N when signal N ended the process.
func shellStatus(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
