package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// The interactive tests drive 'cordon run' through a real terminal (a pty
// whose slave is the controlling terminal of cordon's session, as a
// terminal emulator's is of a login shell), as the invoking user and, as
// root, as an unprivileged one.

// ttyUser is one user's fixture: a cordon binary and a workspace they own.
type ttyUser struct {
	u       conformance.User
	bin, ws string
	home    string
}

func ttyUsers(t *testing.T) []ttyUser {
	t.Helper()
	testenv.RequireBwrap(t)
	if testing.Short() {
		t.Skip("builds the cordon binary")
	}
	base, err := os.MkdirTemp("", "cordon-tty-")
	require.NoError(t, err)
	t.Cleanup(func() { exec.Command("rm", "-rf", base).Run() })
	require.NoError(t, os.Chmod(base, 0o755))
	bin := filepath.Join(base, "cordon")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	users := []conformance.User{conformance.Invoker()}
	if os.Getuid() == 0 {
		u, err := conformance.Unprivileged()
		require.NoError(t, err)
		users = append(users, u)
	}
	var out []ttyUser
	for _, u := range users {
		home := filepath.Join(base, "home-"+u.Name)
		ws := filepath.Join(home, "ws")
		require.NoError(t, os.MkdirAll(ws, 0o755))
		require.NoError(t, os.Chown(home, u.Uid, u.Gid))
		require.NoError(t, os.Chown(ws, u.Uid, u.Gid))
		out = append(out, ttyUser{u: u, bin: bin, ws: ws, home: home})
	}
	return out
}

// session is cordon running on a terminal the test types into.
type session struct {
	t    *testing.T
	pty  *conformance.Pty
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // expect has matched up to here
	// initial is the terminal's state before the test started anything.
	initial string
	done    chan struct{}
}

func (tu ttyUser) start(t *testing.T, args ...string) *session {
	t.Helper()
	return tu.startOnTerminal(t, append([]string{tu.bin, "run", "--workspace", tu.ws, "--"}, args...)...)
}

// startOnTerminal runs argv as the session leader of a new terminal.
func (tu ttyUser) startOnTerminal(t *testing.T, argv ...string) *session {
	t.Helper()
	pty, err := conformance.OpenTerminal()
	require.NoError(t, err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = tu.ws
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tu.home, "TERM=xterm", "PS1=$ "}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pty.Slave, pty.Slave, pty.Slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if !tu.u.Invoker {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(tu.u.Uid), Gid: uint32(tu.u.Gid), Groups: []uint32{}}
	}
	initial, err := pty.State()
	require.NoError(t, err)
	terminalSignals()
	require.NoError(t, cmd.Start())
	s := &session{t: t, pty: pty, cmd: cmd, initial: initial, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := pty.Master.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pty.Close()
	})
	return s
}

// terminalSignals gives what the tests start on a terminal SIGHUP's
// default action, as a terminal emulator gives its shell, when this
// process was started with it ignored (from a script under nohup): cordon
// would inherit it ignored and, as the caller would then mean, neither end
// on a hang-up nor pass it on (TestRunNohupKeepsTheSandbox). A signal this
// process catches is reset to its default in a child's exec.
var terminalSignals = sync.OnceFunc(func() {
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
})

// expect waits for want to appear in the output after the last match.
func (s *session) expect(want string) {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		out := s.out.String()
		s.mu.Unlock()
		if i := strings.Index(out[s.seen:], want); i >= 0 {
			s.seen += i + len(want)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.t.Fatalf("no %q in the terminal's output:\n%q", want, s.out.String()[s.seen:])
}

func (s *session) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *session) send(keys string) {
	s.t.Helper()
	_, err := io.WriteString(s.pty.Master, keys)
	require.NoError(s.t, err)
}

// wait returns cordon's exit status.
func (s *session) wait() int {
	s.t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- s.cmd.Wait() }()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatalf("cordon did not end; terminal output:\n%q", s.output())
	}
	ws := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		s.t.Fatalf("cordon itself died of %v; terminal output:\n%q", ws.Signal(), s.output())
	}
	return ws.ExitStatus()
}

func forUsers(t *testing.T, f func(t *testing.T, tu ttyUser)) {
	for _, tu := range ttyUsers(t) {
		t.Run(tu.u.Name, func(t *testing.T) { f(t, tu) })
	}
}

func TestTtyResizeAndCtrlC(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.start(t, "bash", "-c", `trap 'echo size $(stty size)' WINCH
trap 'echo cleaned > cleanup; exit 7' INT
echo READY $(stty size)
while :; do sleep 0.05; done`)
		s.expect("READY 24 80")
		require.True(t, s.pty.Raw(), "the user's terminal is not raw while the command runs")
		require.NoError(t, s.pty.Resize(40, 120))
		s.expect("size 40 120")
		s.send("\x03")
		require.Equal(t, 7, s.wait(), s.output())
		b, err := os.ReadFile(filepath.Join(tu.ws, "cleanup"))
		require.NoError(t, err, "the INT trap did not run:\n%q", s.output())
		require.Equal(t, "cleaned\n", string(b))
		require.False(t, s.pty.Raw(), "the user's terminal stays raw")
	})
}

func TestTtyCtrlCUntrapped(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.start(t, "sh", "-c", `echo READY; exec sleep 100`)
		s.expect("READY")
		time.Sleep(50 * time.Millisecond) // the exec
		s.send("\x03")
		require.Equal(t, 128+int(syscall.SIGINT), s.wait(), s.output())
	})
}

func TestTtyPasswordFromDevTty(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		// As ssh, git and gpg ask: on /dev/tty, with echo off, whatever
		// stdin is.
		s := tu.start(t, "sh", "-c", `exec </dev/null
stty -echo </dev/tty
printf 'Password: ' >/dev/tty
read -r pw </dev/tty
stty echo </dev/tty
echo
echo "got[$pw]"`)
		s.expect("Password: ")
		s.send("s3cret\r")
		s.expect("got[s3cret]")
		require.Equal(t, 0, s.wait())
		require.Equal(t, 1, strings.Count(s.output(), "s3cret"), "the password was echoed:\n%q", s.output())
	})
}

func TestTtyModesRestoredAfterCrash(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.start(t, "sh", "-c", `echo READY; read x; stty raw -echo -isig; printf '\033[?1049h'; kill -9 $$`)
		s.expect("READY")
		require.True(t, s.pty.Raw())
		s.send("go\r")
		require.Equal(t, 128+int(syscall.SIGKILL), s.wait(), s.output())
		after, err := s.pty.State()
		require.NoError(t, err)
		require.Equal(t, s.initial, after, "the user's terminal modes changed")
	})
}

func TestTtyJobControl(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.start(t, "bash", "--norc", "--noprofile", "-i")
		s.expect("$ ")
		s.send("sleep 100 &\r")
		s.expect("$ ")
		s.send("jobs\r")
		s.expect("Running")
		s.expect("sleep 100 &")
		s.expect("$ ")
		// The job says it runs (it then holds the terminal's foreground:
		// bash gives it in the child before exec), so ^Z stops it rather
		// than reach bash, which ignores it, at its prompt.
		s.send("sh -c 'echo RU\"\"N; exec sleep 50'\r")
		s.expect("RUN")
		s.send("\x1a")
		s.expect("Stopped")
		s.expect("$ ")
		s.send("jobs; fg %1\r")
		s.expect("sleep 100")
		time.Sleep(200 * time.Millisecond)
		s.send("\x03")
		s.expect("$ ")
		s.send("jobs; tty\r")
		s.expect("Stopped")
		s.expect("/dev/")
		s.expect("$ ")
		// Until bash has reaped the killed job (wait returns at once for a
		// stopped one).
		s.send("kill -9 %2; while jobs %2 2>/dev/null | grep -q Stopped; do sleep 0.05; done; echo \"re\"\"aped\"\r")
		s.expect("reaped")
		s.expect("$ ")
		s.send("exit 5\r")
		require.Equal(t, 5, s.wait(), s.output())
		require.False(t, s.pty.Raw())
	})
}

func TestTtySignalsToCordon(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
			t.Run(sig.String(), func(t *testing.T) { signalCase(t, tu, sig) })
		}
	})
}

// signalCase sends cordon sig (SIGTERM or SIGHUP) while the command runs:
// the command's trap for it runs, and its status is cordon's.
func signalCase(t *testing.T, tu ttyUser, sig syscall.Signal) {
	os.Remove(filepath.Join(tu.ws, "got"))
	s := tu.start(t, "bash", "-c", `trap 'echo TERM > got; exit 3' TERM
trap 'echo HUP > got; exit 4' HUP
echo READY; while :; do sleep 0.05; done`)
	s.expect("READY")
	require.NoError(t, s.cmd.Process.Signal(sig))
	code := s.wait()
	b, _ := os.ReadFile(filepath.Join(tu.ws, "got"))
	if sig == syscall.SIGTERM {
		require.Equal(t, 3, code, s.output())
		require.Equal(t, "TERM\n", string(b))
	} else {
		require.Equal(t, 4, code, s.output())
		require.Equal(t, "HUP\n", string(b))
	}
	require.False(t, s.pty.Raw())
}

// The tests' own SIGHUP ignored, as in a run from a script started with
// nohup, must not reach the cordon they start on a terminal
// (terminalSignals): the hang-up case runs in a child of this test binary
// that starts with SIGHUP ignored.
func TestTtyHangupWithTheTestsIgnoringSIGHUP(t *testing.T) {
	tu := ttyUsers(t)[0]
	cmd := testenv.Subprocess(t, "TestHelperTtyHangup", tu.bin)
	// sh's trap '' ignores SIGHUP, and exec keeps it ignored.
	cmd.Args = append([]string{"sh", "-c", `trap '' HUP; exec "$0" "$@"`}, append(cmd.Args, "-test.v")...)
	cmd.Path = "/bin/sh"
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestHelperTtyHangup", "%s", out)
}

// TestHelperTtyHangup is the hang-up case for the invoker, run by the test
// above; its argument is the cordon binary.
func TestHelperTtyHangup(t *testing.T) {
	bin := testenv.InSubprocess(t)
	require.True(t, signal.Ignored(syscall.SIGHUP), "this process was to start with SIGHUP ignored")
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	signalCase(t, ttyUser{u: conformance.Invoker(), bin: bin, ws: ws, home: home}, syscall.SIGHUP)
}

// Ctrl-Z on a command run directly (no shell inside to take it) stops
// cordon for the user's shell, as it would stop the command outside; fg
// brings both back.
func TestTtySuspendToTheUsersShell(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.startOnTerminal(t, "bash", "--norc", "--noprofile", "-i")
		s.expect("$ ")
		s.send(tu.bin + ` run --workspace . -- sh -c 'echo RE""ADY; read x; echo "go""t[$x]"'` + "\r")
		s.expect("READY")
		time.Sleep(100 * time.Millisecond)
		s.send("\x1a")
		s.expect("Stopped")
		s.expect("$ ")
		s.send("fg\r")
		time.Sleep(300 * time.Millisecond)
		s.send("abc\r")
		s.expect("got[abc]")
		s.expect("$ ")
		s.send("exit 6\r")
		require.Equal(t, 6, s.wait(), s.output())
	})
}

// With stdin a pipe, the command reads it as it is, and keystrokes still
// reach it through /dev/tty, as with 'seq 100 | less' outside.
func TestTtyStdinPipedKeysFromTerminal(t *testing.T) {
	forUsers(t, func(t *testing.T, tu ttyUser) {
		s := tu.startOnTerminal(t, "sh", "-c", `echo piped | "$0" run --workspace "$1" -- sh -c 'read -r p; echo "stdin[$p]"; test -t 0 || echo "NOT""TTY0"; printf "key? " >/dev/tty; read -r k </dev/tty; echo "k[$k]"'`, tu.bin, tu.ws)
		s.expect("stdin[piped]")
		s.expect("NOTTTY0")
		s.expect("key? ")
		s.send("z\r")
		s.expect("k[z]")
		require.Equal(t, 0, s.wait(), s.output())
	})
}
