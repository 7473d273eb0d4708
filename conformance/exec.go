package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/spawn"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/tty"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Policy is a case's policy in the terms of 'cordon run' flags.
type Policy struct {
	// Workspace is the --workspace preset's DIR ("" for none); its HOME is
	// the case's home directory.
	Workspace string
	Deny      []string
	Readonly  []string
	Writable  []string
	Base      []string
	Restrict  bool
	// Network keeps the host's network (--network on).
	Network bool
	// File, when set, is a JSON policy file (--policy FILE).
	File string
	// AllowRead are --allow-read stores (with Workspace).
	AllowRead []string
	// AgentsRoot, Agent and Parent are the --agents-root preset.
	AgentsRoot, Agent, Parent string
	// WritablePathDirs are --writable-path-dir opt-outs.
	WritablePathDirs []string
	// GitWrites is --allow-git-writes.
	GitWrites bool
	// AllowDomains and DenyDomains are the network allowlist
	// (--allow-domain, --deny-domain).
	AllowDomains, DenyDomains []string
	// UnixSockets are host sockets handed over (--allow-unix-socket).
	UnixSockets []string
	// Env are variables named with --env (NAME passes one whose name marks
	// a secret; NAME=VAL sets one): the environment, not the policy, but
	// given on the same command line.
	Env []string
}

// Flags renders p as 'cordon run' flags.
func (p Policy) Flags() []string {
	var f []string
	if p.File != "" {
		f = append(f, "--policy", p.File)
	}
	if p.Workspace != "" {
		f = append(f, "--workspace", p.Workspace)
	}
	for _, l := range []struct {
		flag  string
		paths []string
	}{{"--deny", p.Deny}, {"--readonly", p.Readonly}, {"--writable", p.Writable}, {"--base-writable", p.Base},
		{"--allow-read", p.AllowRead}, {"--writable-path-dir", p.WritablePathDirs},
		{"--allow-domain", p.AllowDomains}, {"--deny-domain", p.DenyDomains},
		{"--allow-unix-socket", p.UnixSockets}} {
		for _, x := range l.paths {
			f = append(f, l.flag, x)
		}
	}
	if p.Restrict {
		f = append(f, "--restrict-writes")
	}
	if p.GitWrites {
		f = append(f, "--allow-git-writes")
	}
	for _, l := range []struct{ flag, v string }{{"--agents-root", p.AgentsRoot}, {"--agent", p.Agent}, {"--parent", p.Parent}} {
		if l.v != "" {
			f = append(f, l.flag, l.v)
		}
	}
	if p.Network {
		f = append(f, "--network", "on")
	}
	for _, e := range p.Env {
		f = append(f, "--env", e)
	}
	return f
}

// Spec is p as 'cordon run' composes it, for a launch whose environment
// is env (HOME, PATH) by a cordon binary at exe.
func (p Policy) Spec(env []string, exe string) workspace.Spec {
	s := workspace.Spec{
		Files: files(p.File), Deny: p.Deny, Readonly: p.Readonly, Writable: p.Writable,
		BaseWritable: p.Base, RestrictWrites: p.Restrict, Workspace: p.Workspace,
		AllowRead: p.AllowRead, AgentsRoot: p.AgentsRoot, Agent: p.Agent, Parent: p.Parent,
		Home: envValue(env, "HOME"), Environ: env, ConfigHome: envValue(env, "XDG_CONFIG_HOME"), DataHome: envValue(env, "XDG_DATA_HOME"),
		ScanCache:   launcher.ScanCacheDir(),
		Executables: []string{exe}, Path: envValue(env, "PATH"), WritablePathDirs: p.WritablePathDirs,
		GitWrites: p.GitWrites, AllowDomains: p.AllowDomains, DenyDomains: p.DenyDomains,
		HostNetwork: p.Network, UnixSockets: p.UnixSockets,
	}
	if p.AgentsRoot == "" && p.Agent != "" {
		// --agent without --agents-root names an agent CLI, as in cordon run.
		s.Agent, s.AgentCLI = "", p.Agent
	}
	return s
}

// files is the policy file, if any, as Spec.Files.
func files(f string) []string {
	if f == "" {
		return nil
	}
	return []string{f}
}

// Launch is one sandboxed command of a case.
type Launch struct {
	Policy Policy
	Argv   []string
	Dir    string
	Env    []string // the sandbox's whole environment
	Stdin  io.Reader
	// Tty, when set, is a pty slave that becomes stdin and the controlling
	// terminal of the process that launches the sandbox.
	Tty *os.File
	// Cordon, when set, is the cordon binary that launches, in place of
	// the executor's (a binary the case built inside a workspace).
	Cordon string
	// Interactive launches in cordon's interactive mode (run --tty,
	// launcher.Cmd.Tty): the sandbox gets a pty of its own, relayed to
	// stdin. Otherwise, with Tty set, 'cordon run' gets --no-tty.
	Interactive bool
	// Leak lists host files the launching process opens without
	// O_CLOEXEC just before it starts (flags are os.OpenFile's); the
	// descriptor numbers are put in $LEAKED_FDS.
	Leak []LeakFile
	// Stdio, where set, are the launching process's descriptors 0, 1 and
	// 2 in place of Stdin and the captured output, as a careless harness
	// might hand them over (a directory, an O_PATH handle, a terminal).
	// A terminal among them becomes that process's controlling terminal.
	Stdio [3]*os.File
	// Refusable, when set, is part of the error with which cordon may
	// refuse this launch (exit 125): a refusal that says it passes
	// Launch's checks, where the script's end is otherwise required.
	Refusable string
	// At, when set, is called at the launcher's named moments of this
	// launch (internal/testhook.Launch: "resolve", "mount"), so that a
	// case acts exactly there instead of racing for it. Only the
	// in-process executor reaches them (see H.InProcess).
	At func(point string)
	// Audit, when set, is the audit log 'cordon run --audit' writes.
	Audit string
	// Started, when set, is called with the pid of the process that
	// launches (the 'cordon run' child) once it has started.
	Started func(pid int)
	// Flags are more 'cordon run' flags, given before the policy's as
	// they are (an empty --workspace); only the binary executor has a
	// command line to give them on.
	Flags []string
	// NoHome leaves HOME out of the launching process's environment.
	NoHome bool
}

// LeakFile is a descriptor the harness leaks on purpose.
type LeakFile struct {
	Path string
	Flag int
}

// Output is what a sandboxed command printed and how it ended.
type Output struct {
	Stdout, Stderr string
	Code           int
	// MaxRSS is the largest resident set, in bytes, of the 'cordon run'
	// child and the processes it waited for (getrusage's ru_maxrss,
	// taken per process): host-side cordon's memory, as the sandbox's
	// own processes are small. 0 from an executor that cannot tell.
	MaxRSS int64
	// Ended is when the launch returned.
	Ended time.Time
}

func (o Output) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", o.Code, clip(o.Stdout), clip(o.Stderr))
}

// clip bounds what a failure quotes of a command's output or a file:
// whole up to clipHead+clipTail bytes, beyond that its head and its tail
// (where a command says why it ended), cut at line ends, with a line that
// says how much was left out. The table shortens details further
// (shortDetail); JSON and JUnit keep what clip kept.
func clip(s string) string {
	if len(s) <= clipHead+clipTail {
		return s
	}
	head, tail := s[:clipHead], s[len(s)-clipTail:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	left := len(s) - len(head) - len(tail)
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return fmt.Sprintf("%s[... %d bytes left out ...]\n%s", head, left, tail)
}

const clipHead, clipTail = 32 << 10, 32 << 10

// Executor runs a Launch inside a backend as some user.
type Executor interface {
	// Name says how cases reach the sandbox ("cordon run", "launcher").
	Name() string
	// Backend is the backend cases are run under.
	Backend() string
	// Exec runs l as user u.
	Exec(ctx context.Context, u User, l Launch) (Output, error)
	// Helper is the cordon binary that runs 'cordon __attack'.
	Helper() string
}

// Binary runs cases through 'cordon run', in a child process with the
// user's credentials.
type Binary struct {
	Path        string // the cordon binary, readable by every user of the run
	BackendName string
	// Wrap, when set, is a command line that 'cordon run' runs inside,
	// as the user (e.g. a bwrap that forbids user namespaces, as a
	// container does, for the landlock backend).
	Wrap []string
}

func (b *Binary) Name() string    { return "cordon run" }
func (b *Binary) Backend() string { return b.BackendName }
func (b *Binary) Helper() string  { return b.Path }

func (b *Binary) Exec(ctx context.Context, u User, l Launch) (Output, error) {
	args := []string{"run", "--backend", b.BackendName}
	if l.Interactive {
		args = append(args, "--tty")
	} else if l.Tty != nil {
		args = append(args, "--no-tty")
	}
	args = append(args, l.Flags...)
	args = append(args, l.Policy.Flags()...)
	if l.Audit != "" {
		args = append(args, "--audit", l.Audit)
	}
	args = append(append(args, "--"), l.Argv...)
	bin := b.Path
	if l.Cordon != "" {
		bin = l.Cordon
	}
	if len(b.Wrap) > 0 {
		args = append(append(b.Wrap[1:len(b.Wrap):len(b.Wrap)], bin), args...)
		bin = b.Wrap[0]
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = l.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = l.Stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if !u.Invoker {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.Uid), Gid: uint32(u.Gid), Groups: []uint32{}}
	}
	if l.Tty != nil {
		cmd.Stdin = l.Tty
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	}
	if i := l.setStdio(&cmd.Stdin, &cmd.Stdout, &cmd.Stderr); i >= 0 && l.Tty == nil {
		cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, i
	}
	ownGroup(cmd)
	// When the case's context ends (its launch timed out, or the run was
	// interrupted), cordon run is told to stop as a user would tell it,
	// SIGTERM, so that it ends its sandbox in order (what the command
	// left running killed); SIGKILL if it has not ended
	// 2 seconds later. (Not WaitDelay: it would also cut short the
	// output of a launch that ended normally.)
	cmd.Cancel = func() error {
		time.AfterFunc(2*time.Second, func() { cmd.Process.Kill() })
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	fds, closeFds, err := leak(l.Leak)
	if err != nil {
		return Output{}, err
	}
	cmd.Env = append(append([]string{}, l.Env...), "LEAKED_FDS="+fds)
	// From a thread that lives as long as this process: through bwrap,
	// 'cordon run' execs bwrap --die-with-parent in its place, which dies
	// with the thread that forked cordon, and the keyring cases end theirs
	// (internal/spawn).
	start := func() error {
		err := spawn.Start(cmd)
		if err == nil && l.Started != nil {
			l.Started(cmd.Process.Pid)
		}
		return err
	}
	o, err := finish(start, cmd.Wait, closeFds, &out, &errb)
	if err != nil {
		return o, fmt.Errorf("cordon run: %w", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		o.MaxRSS = int64(ru.Maxrss) * maxrssUnit
	}
	return o, nil
}

// ownGroup puts cmd, unless it starts a session of its own, in a process
// group of its own: a Ctrl-C on the terminal reaches 'cordon verify'
// alone, which then stops its cases, rather than each of its children at
// once, where a case might judge a child killed by the signal before the
// suite knew it was interrupted.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
	}
}

// finish starts a prepared command, closes the case's leaked descriptors
// once the child holds them, waits, and collects the output. A non-zero
// exit is the case's outcome, not an error; any other failure is returned.
func finish(start, wait func() error, closeFds func(), out, errb *bytes.Buffer) (Output, error) {
	err := start()
	closeFds()
	if err == nil {
		err = wait()
	}
	o := Output{Stdout: out.String(), Stderr: errb.String(), Ended: time.Now()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		o.Code = ee.ExitCode()
		err = nil
	}
	return o, err
}

// Launcher runs cases through the launcher API in this process, as the
// invoking user only. The mutation check needs it: its hooks live here.
type Launcher struct {
	BackendName string
	HelperPath  string
}

func (l *Launcher) Name() string    { return "launcher" }
func (l *Launcher) Backend() string { return l.BackendName }
func (l *Launcher) Helper() string  { return l.HelperPath }

func (x *Launcher) Exec(ctx context.Context, u User, l Launch) (Output, error) {
	if !u.Invoker {
		return Output{}, errors.New("launcher executor runs as the invoking user only")
	}
	// As 'cordon run' would compose it, run by the helper binary.
	comp, err := workspace.Compose(l.Policy.Spec(l.Env, l.cordon(x.HelperPath)))
	if err != nil {
		return Output{Code: 125, Stderr: err.Error()}, nil
	}
	cmd := launcher.CommandContext(ctx, comp.Policy, l.Argv[0], l.Argv[1:]...)
	cmd.Backend = x.BackendName
	cmd.Network = l.Policy.Network
	cmd.NetPolicy = comp.Network
	cmd.TmpDir, cmd.CacheDir = comp.TmpDir, comp.CacheDir
	cmd.UnixSockets = comp.UnixSockets
	cmd.IDs, cmd.Canonical = comp.Canonical.IDs(), comp.Canonical
	cmd.Dir = l.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = l.Stdin
	if l.Tty != nil {
		cmd.Stdin = l.Tty
	}
	cmd.Tty = l.Interactive
	l.setStdio(&cmd.Stdin, &cmd.Stdout, &cmd.Stderr)
	fds, closeFds, err := leak(l.Leak)
	if err != nil {
		return Output{}, err
	}
	cmd.Env = append(append([]string{}, l.Env...), "LEAKED_FDS="+fds)
	if l.At != nil {
		if testhook.Launch == nil {
			closeFds()
			return Output{}, errors.New("launcher executor: a case acts at the launcher's moments, but its test hook is not installed (InstallLaunchHook)")
		}
		launchHooks.Store(any(cmd), l.At)
		defer launchHooks.Delete(any(cmd))
	}
	o, err := finish(cmd.Start, cmd.Wait, closeFds, &out, &errb)
	if err != nil {
		// As 'cordon run' reports a launch it refused.
		o.Code = 125
		o.Stderr += "\nlaunch: " + err.Error()
	}
	return o, nil
}

// launchHooks maps each in-process launch (its *launcher.Cmd) that acts
// at the launcher's moments to its Launch.At.
var launchHooks sync.Map

// InstallLaunchHook routes the launcher's test hook (testhook.Launch) to
// the Launch.At of the launch it is called for. Only a test calls it,
// before any launch: the hook is a switch of the launcher's.
func InstallLaunchHook() {
	testhook.Launch = func(cmd any, point string) {
		if f, ok := launchHooks.Load(cmd); ok {
			f.(func(string))(point)
		}
	}
}

// setStdio puts l.Stdio in place; it returns the first of them that is a
// terminal, or -1.
func (l Launch) setStdio(stdin *io.Reader, stdout, stderr *io.Writer) int {
	term := -1
	for i, f := range l.Stdio {
		if f == nil {
			continue
		}
		switch i {
		case 0:
			*stdin = f
		case 1:
			*stdout = f
		case 2:
			*stderr = f
		}
		if tty.IsTerminal(f) && term < 0 {
			term = i
		}
	}
	return term
}

// cordon is the cordon binary that launches l when the executor's is def.
func (l Launch) cordon(def string) string {
	if l.Cordon != "" {
		return l.Cordon
	}
	return def
}

// envValue is key's value in env; the last one wins, as in os/exec.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// leak opens files without O_CLOEXEC, as a careless parent would, so the
// launch has to close them itself.
func leak(files []LeakFile) (string, func(), error) {
	var fds []string
	var opened []int
	closeAll := func() {
		for _, fd := range opened {
			syscall.Close(fd)
		}
	}
	for _, f := range files {
		fd, err := syscall.Open(f.Path, f.Flag, 0)
		if err != nil {
			closeAll()
			return "", nil, fmt.Errorf("leak %s: %w", f.Path, err)
		}
		opened = append(opened, fd)
		fds = append(fds, strconv.Itoa(fd))
	}
	return strings.Join(fds, " "), closeAll, nil
}

// copyExecutable copies the running binary to dir so that every user of
// the run can execute it (go run and go test build under 0700 dirs).
func copyExecutable(src, dir string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, "cordon")
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}
