package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/spawn"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/internal/timing"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/netproxy"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/tty"
)

// Backend names.
const (
	BackendAuto     = "auto"
	BackendBwrap    = "bwrap"
	BackendNative   = "native"
	BackendLandlock = "landlock"
	BackendSeatbelt = "seatbelt"
	BackendNone     = "none"
)

// ErrNoBackend is wrapped by Start's error when no sandbox can be had.
var ErrNoBackend = errors.New("no usable sandbox backend")

// ErrDenied is wrapped when the command itself lies where the policy
// forbids reading it.
var ErrDenied = errors.New("command is in a denied root")

// Cmd is a command to run inside a sandbox.
type Cmd struct {
	// Path, Args, Env, Dir, Stdin, Stdout, Stderr and ExtraFiles mean what
	// they mean in os/exec, but for Env nil: the launcher's environment
	// without the variables whose names mark a secret (WithholdSecrets;
	// docs/threat-model.md, "Secrets in the environment"), or all of it
	// with InheritEnv. An Env given is passed as it is: its caller named
	// every variable in it.
	// No other descriptor of the caller reaches the sandbox, but through
	// bwrap one opened without close-on-exec while Start runs may: open
	// such descriptors under syscall.ForkLock, as os/exec asks too
	// (docs/threat-model.md, class 9).
	//
	// Each of them that is an *os.File must be a stream (docs/
	// threat-model.md, class 16): Start refuses, with a *DescriptorError
	// naming it ("stdin is a directory (/)") that wraps ErrDescriptor, a
	// directory, an O_PATH handle, a pidfd, a namespace or other
	// anonymous-inode handle, a socket other than a connected Unix stream
	// one, a block device, a character device other than a terminal and
	// /dev/null, zero, full, random and urandom. On Linux a regular file
	// the sandbox could reopen through /proc/self/fd for more than the
	// descriptor gives and the policy allows (one opened for reading
	// outside the writable roots; one opened for writing in a denied root)
	// reaches the command through a pipe on stdin, stdout and stderr, and
	// is refused in ExtraFiles. A terminal never enters the sandbox:
	// without Tty, one on Stdin is replaced by /dev/null and one on Stdout
	// or Stderr by a pipe copied to it; the screen modes the command's
	// output switched on there are switched off by Wait. With Backend
	// "none" nothing is checked: there is no sandbox to keep.
	Path       string
	Args       []string
	Env        []string
	Dir        string
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
	ExtraFiles []*os.File
	// InheritEnv, with Env nil, passes the launcher's whole environment,
	// secrets included, as os/exec does.
	InheritEnv bool
	// PassEnv, with Env nil, names variables of the launcher's environment
	// passed although their names mark a secret (workspace.Composed's
	// PassEnv: a policy file's "env", an agent CLI's keys).
	PassEnv []string

	// Policy is the filesystem policy; it is canonicalized at Start.
	Policy policy.FsSandboxPolicy
	// IDs, when set, are the identities (device, inode) of the policy's
	// roots as the caller resolved them, usually workspace.Composed's
	// Canonical.IDs(). Start refuses the launch, naming the root, when one
	// of them now resolves elsewhere, or a writable one names another file
	// (policy.Canonical.CheckIDs): a directory swapped for a symlink or
	// another directory between building the policy and the launch would
	// otherwise give the sandbox roots nobody built a policy for. With bwrap, the roots are then bound from descriptors checked
	// against the same identities (see docs/threat-model.md).
	IDs map[string]policy.FileID
	// Canonical, when set, is the canonical policy the caller built Policy
	// from a moment ago (workspace.Composed.Canonical). A launch through the
	// native backend then resolves Policy on the view of the host that
	// Canonical rests on (policy.Canonical.Recanonicalize) instead of
	// looking every root up again, which was a sixth of a large policy's
	// launch: its init opens every mount's source without following a
	// link and checks the identity that view recorded, so a root changed
	// since still fails the launch. bwrap, which binds by path, looks
	// again. Policy decides either way.
	Canonical *policy.Canonical
	// Backend is "auto" (or ""), "bwrap", "seatbelt" or "none".
	Backend string
	// Network keeps the host's network; the default is none.
	Network bool
	// NetPolicy, when set, is a network allowlist: the sandbox has no
	// network of its own, and reaches the hosts NetPolicy allows through
	// a proxy this process runs from Start to Wait (package netproxy),
	// named by HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (and their lower-case
	// forms) inside. It cannot be combined with Network. Under bwrap the
	// sandbox must be able to read and execute this program, which sets
	// the proxy up inside before the command starts.
	NetPolicy *netpolicy.Policy
	// NetEvent, when set, is called for every decision of the proxy, one
	// call at a time; without it, each refused host is named once on
	// Stderr.
	NetEvent func(netproxy.Event)
	// UnixSockets are host sockets handed over (docs/guide.md): Start
	// refuses one that is no longer the socket recorded (ID, when set);
	// the gate admits a connect that reaches that inode, and no other.
	UnixSockets []policy.HostSocket
	// TmpDir, when set, is created (0700, owned by the caller) before the
	// launch and given to the command as TMPDIR.
	TmpDir string
	// CacheDir, when set, is the workspace's private cache (the workspace
	// preset gives one per workspace, in cordon's state directory):
	// created, kept and tidied as TmpDir is, and named by each tool's own
	// cache variable inside (GOCACHE, GOMODCACHE, npm_config_cache,
	// PIP_CACHE_DIR, ...; package internal/toolcache) unless the command's
	// environment already points that variable somewhere the sandbox may
	// write. The policy must make it writable.
	CacheDir string
	// Tty gives the command a pseudo-terminal of its own, as ssh -t and
	// docker run -t do (Linux and macOS). Each of Stdin, Stdout and Stderr
	// that is a terminal (an *os.File, see tty.IsTerminal) is replaced inside
	// by the new terminal, which is the controlling terminal of the
	// command's session: Ctrl-C, Ctrl-Z and Ctrl-\ signal the foreground
	// job inside, resizes arrive as SIGWINCH, /dev/tty opens. From Start
	// to Wait the launcher relays between the two terminals, with the
	// caller's in raw mode when it is read from (Stdin, or else a Stdout
	// or Stderr terminal open for reading), restored by Wait, or by Exec
	// on any way out, after Wait switched off the screen modes the
	// command's output switched on and left on (alternate screen, mouse
	// reporting, hidden cursor, bracketed paste, application keys, focus
	// events). The caller's terminal never enters the sandbox:
	// nothing inside can type into it or read from it. When none of the
	// three is a terminal, all three are the new one, fed from Stdin
	// (ended by an end-of-file character) and copied to Stdout.
	//
	// Ctrl-Z typed for a command that runs with no job-control shell
	// inside stops it and the caller's process group, as the key would
	// outside, when the caller is a shell's job; fg resumes both.
	//
	// Under bwrap the command's session gets its terminal from setsid(1)
	// (when the pty is stdin) or from this program, run inside as a
	// helper before the command; when neither is readable there, the
	// command gets the terminal without it being controlling, and a
	// warning says so on Stderr.
	Tty bool

	// KillLeftovers, under the landlock backend (which has no pid
	// namespace to end everything inside with the sandbox), makes this
	// process a child subreaper (PR_SET_CHILD_SUBREAPER, for the rest of
	// its life) from Start on, and has Wait kill every process that was
	// reparented to it once the sandbox has ended. The sandbox's keeper
	// (package landlock) already ends what the command started and left
	// running (a daemon, a background job) when the command exits, and
	// the whole sandbox when this process ends, whether or not this is
	// set; this is for a keeper killed before it could (see
	// docs/threat-model.md). Wait kills and reaps every child of this
	// process then, so set it
	// only in a program whose children are all its sandboxes' (cordon run
	// does); off, this process's handling of children is left alone.
	KillLeftovers bool

	// Cancel and WaitDelay mean what they mean in os/exec; Cancel's
	// default kills the sandbox, and with it everything inside.
	Cancel    func() error
	WaitDelay time.Duration

	// Err holds a lookup error from Command; Start returns it.
	Err error

	// Process and ProcessState are those of the sandbox process.
	Process      *os.Process
	ProcessState *os.ProcessState

	// Detected is the backend that Start used (or found unusable).
	Detected detect.Result

	ctx        context.Context
	inner      *exec.Cmd
	release    func()   // removes the launch's temp files after Wait
	tmpHold    *os.File // the TMPDIR, locked while the sandbox runs
	cacheHold  *os.File // the private cache, likewise
	tty        *tty.Session
	net        *netSession
	ttyInBwrap bool // bwrap's session: the command sets its own controlling terminal
	// handoff: nothing needs undoing after the sandbox, so Exec may
	// replace this process.
	handoff bool
	// quit, closed by Exec's signal handling when SIGINT or SIGTERM
	// comes after the sandbox has ended, stops the waits that remain
	// (the proxy's last events). gone is closed when the sandbox has
	// ended.
	quit     chan struct{}
	gone     chan struct{}
	goneOnce sync.Once
	// launchCheck, when set, is called by Wait once the sandbox process
	// has ended but before it is reaped; the judge it returns turns the
	// exit status into an error when the backend's own launcher failed
	// before starting the command (Seatbelt: see seatbelt_darwin.go).
	launchCheck func(pid int) (judge func(*os.ProcessState) error)
	// exiting: Exec started this launch, and nothing copies its stdio;
	// the native backend then asks its init for the command's status
	// ahead of its own exit, on the pipe status (the init holds statusW;
	// see reported).
	exiting         bool
	status, statusW *os.File
	// leftovers, when set, is /proc/self/task, opened before the start:
	// Wait kills what the command left behind (KillLeftovers) by listing
	// this process's children below it.
	leftovers *os.File
	// afterStart, when set, runs once the sandbox process has started
	// (the landlock backend's metadata gate); stopGate ends that gate
	// when the run ends.
	afterStart func()
	stopGate   func()
	// termOut are the caller's terminals that stdout and stderr reach
	// through a pipe (replaceTerminals), for Wait to reset.
	termOut []*tty.Writer
	// streamCanon is the policy of a sandboxed launch, for reopenFiles.
	streamCanon *policy.Canonical
	hosts       hostSockets // UnixSockets as Start found them
}

// Command returns a Cmd that runs name with args under policy p.
func Command(p policy.FsSandboxPolicy, name string, arg ...string) *Cmd {
	c := &Cmd{Policy: p, Path: name, Args: append([]string{name}, arg...)}
	if filepath.Base(name) == name {
		lp, err := exec.LookPath(name)
		if lp != "" {
			c.Path = lp
		}
		if err != nil {
			c.Err = err
		}
	}
	return c
}

// CommandContext is Command with a context that kills the sandbox when done.
func CommandContext(ctx context.Context, p policy.FsSandboxPolicy, name string, arg ...string) *Cmd {
	if ctx == nil {
		panic("launcher: nil Context")
	}
	c := Command(p, name, arg...)
	c.ctx = ctx
	return c
}

// String is a human-readable description of the command (not the sandbox).
func (c *Cmd) String() string {
	return fmt.Sprint(c.Args)
}

// Start starts the sandboxed command.
func (c *Cmd) Start() error {
	inner, release, err := c.prepareOnce()
	if err != nil {
		return err
	}
	return c.start(inner, release)
}

// prepareOnce is what Start and Exec do first: refuse a second start or a
// lookup error, then prepare under the Cmd's context.
func (c *Cmd) prepareOnce() (*exec.Cmd, func(), error) {
	if c.inner != nil {
		return nil, nil, errors.New("launcher: already started")
	}
	if c.Err != nil {
		return nil, nil, c.Err
	}
	if len(c.Args) == 0 && c.Path != "" {
		c.Args = []string{c.Path} // as os/exec takes a Cmd without Args
	}
	unconfined := c.Backend == BackendNone
	if !unconfined {
		if err := c.checkDescriptors(); err != nil {
			return nil, nil, err
		}
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	inner, release, err := c.prepare(ctx)
	if err != nil {
		c.stopNet()
		for _, f := range []**os.File{&c.tmpHold, &c.cacheHold} {
			if *f != nil {
				(*f).Close()
				*f = nil
			}
		}
		return nil, nil, err
	}
	if !unconfined {
		c.replaceTerminals(inner)
		if err := c.reopenFiles(inner); err != nil {
			release()
			c.finish()
			return nil, nil, err
		}
	}
	return inner, release, nil
}

func (c *Cmd) start(inner *exec.Cmd, release func()) error {
	c.inner = inner
	c.release = release
	if c.Tty {
		t, err := tty.New(c.Stdin, c.Stdout, c.Stderr, inner)
		if err != nil {
			c.finish()
			return err
		}
		c.tty = t
		if inner.SysProcAttr == nil {
			inner.SysProcAttr = &syscall.SysProcAttr{}
		}
		if c.ttyInBwrap {
			// Keyboard signals of the caller's terminal (when it is not
			// raw) must not reach bwrap, only what it is passed.
			inner.SysProcAttr.Setpgid = true
		} else {
			// The command itself (sandbox-exec execs it) leads a session
			// with the pty as its controlling terminal.
			inner.SysProcAttr.Setsid, inner.SysProcAttr.Setctty = true, true
			inner.SysProcAttr.Ctty = c.ttyCtty()
		}
	}
	if !testhook.SkipCloseOnExec {
		closeOnExec()
	}
	if testhook.Launch != nil {
		testhook.Launch(c, "mount")
	}
	// Forked on one thread kept for the process's life: the native init
	// dies with the thread that forked it (internal/spawn).
	timing.Mark("run", "plan, spec")
	if err := spawn.Start(inner); err != nil {
		if c.tty != nil {
			c.tty.Abort()
			c.tty = nil
		}
		c.finish()
		return err
	}
	c.Process = inner.Process
	timing.Mark("run", "helper start")
	if c.afterStart != nil {
		c.afterStart()
	}
	if c.statusW != nil {
		// Only the init holds the write end: a read ends when it
		// reports or exits.
		c.statusW.Close()
		c.statusW = nil
	}
	if c.tty != nil {
		c.tty.Start()
	}
	if c.net != nil {
		if err := c.net.start(); err != nil {
			c.Process.Kill()
			c.Wait()
			return fmt.Errorf("network proxy: %w", err)
		}
	}
	return nil
}

// Exec is Run for a process that has nothing left to do but run the
// command: where it can, it replaces the calling process with the sandbox
// (execve, like a shell's exec), so the pid, the signals sent to it and
// the exit status are the sandbox's own, and nothing of the caller stays
// in memory. On success it does not return. That needs bwrap (or no
// sandbox at all), stdin, stdout and stderr that are *os.File or nil and
// reach the sandbox as they are (not a terminal, nor a file it gets
// through a pipe: see Stdin), no
// Context, Cancel or WaitDelay (nothing would be left to act on them), and
// no proxy or entry gate to serve from this process.
//
// bwrap ends the sandbox when its parent ends (--die-with-parent): after
// Exec that parent is the caller's parent. So Exec also keeps the process
// when SIGHUP is ignored, as under nohup, which means to outlive it.
//
// Where it cannot, Exec runs the command like Run, passing SIGINT,
// SIGTERM, SIGHUP and SIGQUIT on to it, and returns what Run returns;
// ProcessState is nil only when the command did not start, or when Exec
// returns an *ExitStatus: with the native backend, stdio that are
// *os.File or nil and no Tty, the sandbox reports the command's status
// once the command and everything else inside have ended, and Exec
// returns it then, without waiting for the kernel to take the sandbox
// down. With Tty it always runs the command like Run, relaying the
// terminal, and passes signals on as a terminal would: SIGINT and
// SIGQUIT to the foreground job inside, SIGTERM to the command, SIGHUP as
// a hang-up of its terminal.
func (c *Cmd) Exec() error {
	c.exiting = !c.Tty && stdioFiles(c.Stdin, c.Stdout, c.Stderr)
	inner, release, err := c.prepareOnce()
	if err != nil {
		return err
	}
	if !c.Tty && c.handoff && c.ctx == nil && c.Cancel == nil && c.WaitDelay == 0 && stdioFiles(inner.Stdin, inner.Stdout, inner.Stderr) && !signal.Ignored(syscall.SIGHUP) {
		if !testhook.SkipCloseOnExec {
			closeOnExec()
		}
		err := execInPlace(inner) // returns only when execve failed
		release()
		return err
	}
	// Signals are caught before the start, so none ends this process
	// while the caller's terminal is raw.
	sigs := make(chan os.Signal, 4)
	// One the caller ignores (SIGHUP under nohup) is neither caught nor
	// passed on: the sandbox inherits it ignored, as the caller meant.
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	defer signal.Stop(sigs)
	c.quit, c.gone = make(chan struct{}), make(chan struct{})
	if err := c.start(inner, release); err != nil {
		return err
	}
	if c.tty != nil {
		defer func() {
			// A panic on the way out still leaves the terminal usable.
			if r := recover(); r != nil {
				c.tty.Restore()
				panic(r)
			}
		}()
	}
	go func() {
		quitting := false
		for s := range sigs {
			select {
			case <-c.gone:
				// Nothing is left to pass it to: it ends what cordon
				// still waits for, and so cordon.
				if (s == syscall.SIGINT || s == syscall.SIGTERM) && !quitting {
					quitting = true
					close(c.quit)
				}
				continue
			default:
			}
			if c.tty == nil || !c.tty.Signal(s) {
				c.Process.Signal(s)
			}
		}
	}()
	// Not when stdio became pipes this process copies (a terminal, a file
	// the sandbox could reopen for more: see replaceTerminals,
	// reopenFiles): Wait sees the copies to their end.
	if code, ok := c.reported(); ok && stdioFiles(inner.Stdin, inner.Stdout, inner.Stderr) {
		// What Wait undoes is undone; the sandbox process is reaped
		// whenever its exit comes.
		c.markGone()
		c.stopNet()
		c.finish()
		go c.inner.Wait()
		return &ExitStatus{Code: code}
	}
	return c.Wait()
}

// Wait waits for the command to exit and removes what the launch created.
// When the sandbox failed before the command started (sandbox-exec could
// not apply the profile), Wait returns an error wrapping ErrProfile, or an
// *exec.Error when the profile applies but the command could not be
// started, and leaves ProcessState nil: the status was the launcher's, not
// the command's.
func (c *Cmd) Wait() error {
	if c.inner == nil {
		return errors.New("launcher: not started")
	}
	var judge func(*os.ProcessState) error
	if c.launchCheck != nil && c.inner.Process != nil {
		judge = c.launchCheck(c.inner.Process.Pid)
	}
	var lerr error
	if c.leftovers != nil && c.inner.Process != nil {
		// Before the wait for stdio copies: a leftover holding the
		// command's stdout would keep them open forever.
		lerr = killLeftovers(c.leftovers, c.inner.Process.Pid)
	}
	err := c.inner.Wait()
	timing.Mark("run", "wait, reap")
	if lerr != nil && err == nil {
		// Reported, never taken for "nothing left": what could not be
		// found may still be running.
		err = lerr
	}
	c.ProcessState = c.inner.ProcessState
	c.markGone()
	c.stopNet() // the sandbox is gone: so is every connection through the proxy
	if c.tty != nil {
		c.tty.Finish()
	}
	c.resetTerminals()
	if judge != nil && c.ProcessState != nil {
		if lerr := judge(c.ProcessState); lerr != nil {
			c.ProcessState, err = nil, lerr
		}
	}
	c.finish()
	return err
}

// markGone says that the sandbox has ended, to Exec's signal handling.
func (c *Cmd) markGone() {
	if c.gone != nil {
		c.goneOnce.Do(func() { close(c.gone) })
	}
}

func (c *Cmd) finish() {
	c.stopNet()
	if c.stopGate != nil {
		c.stopGate()
	}
	for _, f := range []**os.File{&c.status, &c.statusW, &c.leftovers, &c.tmpHold, &c.cacheHold} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output; like os/exec,
// an *exec.ExitError carries captured stderr when Stderr was nil.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("launcher: Stdout already set")
	}
	var out, errb bytes.Buffer
	c.Stdout = &out
	captured := c.Stderr == nil
	if captured {
		c.Stderr = &errb
	}
	err := c.Run()
	var ee *exec.ExitError
	if captured && errors.As(err, &ee) {
		ee.Stderr = errb.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput runs the command and returns stdout and stderr together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("launcher: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// ttyCtty is the descriptor (0, 1 or 2) inside that is the sandbox's pty
// and becomes its session's controlling terminal.
func (c *Cmd) ttyCtty() int { return tty.Ctty(c.Stdin, c.Stdout, c.Stderr) }
