package landlock_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/landlock"
)

// envAct makes the test binary, exec'd by the init inside the sandbox,
// do one thing and print what happened ("ok" or the error's errno).
const envAct = "CORDON_LANDLOCK_TEST_ACT"

func TestMain(m *testing.M) {
	if act := os.Getenv(envAct); act != "" {
		fmt.Print(doAct(act))
		os.Exit(0)
	}
	if arg := os.Getenv(envLaunch); arg != "" {
		fmt.Fprintln(os.Stderr, launchMain(arg))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func doAct(act string) string {
	verb, arg, _ := strings.Cut(act, " ")
	var err error
	switch verb {
	case "write":
		err = os.WriteFile(arg, []byte("x"), 0o644)
	case "read":
		_, err = os.ReadFile(arg)
	case "readdir":
		_, err = os.ReadDir(arg)
	case "connect":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", arg, 5*time.Second); err == nil {
			c.Close()
		}
	case "unix":
		var fd int
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
			unix.Close(fd)
		}
	case "userns":
		err = unix.Unshare(unix.CLONE_NEWUSER)
	case "kill":
		pid, _ := strconv.Atoi(arg)
		err = unix.Kill(pid, unix.SIGKILL)
	case "keeper":
		// Signal 0 to the keeper, this process's parent, by arg's call.
		k := os.Getppid()
		switch arg {
		case "kill":
			err = unix.Kill(k, 0)
		case "kill-group":
			err = unix.Kill(-k, 0)
		case "tgkill":
			err = unix.Tgkill(k, k, 0)
		}
	case "caps":
		b, _ := os.ReadFile("/proc/self/status")
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Cap") || strings.HasPrefix(l, "NoNewPrivs") {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
		return strings.Join(out, "\n")
	default:
		return "unknown act " + verb
	}
	if err == nil {
		return "ok"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// sandbox is a workspace ws, writable, and what the test binary needs
// to run, readable; everything else is outside the domain.
type sandbox struct {
	ws, outside string
	plan        *landlock.Plan
}

func newSandbox(t *testing.T) *sandbox {
	abi := landlock.ABI()
	testenv.Need(t, "Landlock ABI 3 or later", landlock.ABIError(abi))
	dir := t.TempDir()
	s := &sandbox{ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside")}
	require.NoError(t, os.MkdirAll(filepath.Join(s.ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.MkdirAll(s.outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.outside, "secret"), []byte("s"), 0o644))
	plan, err := testPlan(s.ws)
	require.NoError(t, err)
	s.plan = plan
	return s
}

// testPlan grants ws, and reads what the test binary and sh need.
func testPlan(ws string) (*landlock.Plan, error) {
	abi := landlock.ABI()
	read := landlock.Execute | landlock.ReadFile | landlock.ReadDir
	write := landlock.WriteFile | landlock.RemoveDir | landlock.RemoveFile | landlock.MakeDir | landlock.MakeReg |
		landlock.MakeSym | landlock.Refer | landlock.Truncate
	handled := read | write | landlock.MakeChar | landlock.MakeSock | landlock.MakeFifo | landlock.MakeBlock
	if abi < 3 {
		handled &^= landlock.Truncate
		write &^= landlock.Truncate
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	plan := &landlock.Plan{ABI: abi, HandledFS: handled}
	for _, d := range []string{"/usr", "/lib", "/lib64", "/bin", "/etc", "/proc"} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			plan.Rules = append(plan.Rules, landlock.Rule{Path: d, Access: read, Dir: true})
		}
	}
	plan.Rules = append(plan.Rules,
		landlock.Rule{Path: exe, Access: landlock.Execute | landlock.ReadFile},
		landlock.Rule{Path: "/dev/null", Access: landlock.ReadFile | landlock.WriteFile},
		landlock.Rule{Path: ws, Access: read | write, Dir: true},
		// A rule on an object below another (the kernel unions them: a
		// real plan splits the workspace instead, landlock.Render), here
		// for TestLandlockRefusesAChangedObject to change.
		landlock.Rule{Path: filepath.Join(ws, ".git"), Access: read, Dir: true})
	return plan, nil
}

// run execs the test binary with act inside the sandbox.
func (s *sandbox) run(t *testing.T, network bool, act string) string {
	t.Helper()
	r := bwrap.RulesFor(bwrap.SocketsNoNamespace())
	if network {
		r = bwrap.RulesFor(bwrap.SocketsFor(true))
	}
	r.NoUserns = true
	return s.runRules(t, network, r, act)
}

// runRules is run with the filter's rules r.
func (s *sandbox) runRules(t *testing.T, network bool, r bwrap.Rules, act string) string {
	t.Helper()
	exe, _ := os.Executable()
	spec := &landlock.Spec{Plan: s.plan, Network: network, Seccomp: bwrap.Program(r), Path: exe, Argv: []string{exe}}
	cmd, f, err := landlock.Command(context.Background(), spec, 0)
	require.NoError(t, err)
	defer f.Close()
	var out, stderr bytes.Buffer
	cmd.Env = []string{envAct + "=" + act, "PATH=/usr/bin:/bin"}
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.ExtraFiles = []*os.File{f}
	cmd.Dir = s.ws
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	return out.String()
}

func TestLandlockRuntime(t *testing.T) {
	s := newSandbox(t)
	ws := s.ws
	t.Run("write in the workspace", func(t *testing.T) {
		require.Equal(t, "ok", s.run(t, false, "write "+filepath.Join(ws, "built.o")))
		require.FileExists(t, filepath.Join(ws, "built.o"))
	})
	t.Run("write outside", func(t *testing.T) {
		require.Equal(t, "EACCES", s.run(t, false, "write "+filepath.Join(s.outside, "x")))
		require.NoFileExists(t, filepath.Join(s.outside, "x"))
	})
	t.Run("read outside the grant", func(t *testing.T) {
		require.Equal(t, "EACCES", s.run(t, false, "read "+filepath.Join(s.outside, "secret")))
		require.Equal(t, "EACCES", s.run(t, false, "readdir "+s.outside))
	})
	t.Run("network off: no TCP, no Unix socket", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		require.Equal(t, "EACCES", s.run(t, false, "connect "+l.Addr().String()))
		require.Equal(t, "EACCES", s.run(t, false, "unix"))
		require.Equal(t, "ok", s.run(t, true, "connect "+l.Addr().String()), "network on")
		if s.plan.ABI >= 4 {
			// The second wall: with a filter that lets AF_INET through,
			// Landlock's handled TCP rights still refuse the connect.
			require.Equal(t, "EACCES", s.runRules(t, false, bwrap.RulesFor(bwrap.SocketsFor(true)), "connect "+l.Addr().String()))
		}
	})
	t.Run("no new user namespace", func(t *testing.T) {
		require.Equal(t, "EPERM", s.run(t, false, "userns"))
	})
	t.Run("no capabilities", func(t *testing.T) {
		got := s.run(t, false, "caps")
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "Cap") {
				// An ordinary user cannot empty the bounding set (no
				// CAP_SETPCAP): nothing it holds is in use.
				if os.Getuid() != 0 && strings.HasPrefix(l, "CapBnd") {
					continue
				}
				require.True(t, strings.HasSuffix(l, " 0000000000000000"), "%s", got)
			}
		}
		require.Contains(t, got, "NoNewPrivs: 1")
	})
	t.Run("signals scoped", func(t *testing.T) {
		if s.plan.ABI < 6 {
			testenv.NotApplicable(t, fmt.Sprintf("signal scoping needs Landlock ABI 6, this kernel has %d", s.plan.ABI))
		}
		victim := exec.Command("sleep", "60")
		require.NoError(t, victim.Start())
		defer func() { victim.Process.Kill(); victim.Wait() }()
		require.Equal(t, "EPERM", s.run(t, false, fmt.Sprintf("kill %d", victim.Process.Pid)))
		require.NoError(t, victim.Process.Signal(unix.Signal(0)), "the process outside is alive")
	})
}

// TestLandlockRefusesAChangedObject: a rule's object that became a link,
// or another kind, since the plan was made refuses the launch (125)
// instead of granting what is there now.
func TestLandlockRefusesAChangedObject(t *testing.T) {
	s := newSandbox(t)
	require.NoError(t, os.RemoveAll(filepath.Join(s.ws, ".git")))
	require.NoError(t, os.Symlink(s.outside, filepath.Join(s.ws, ".git")))
	exe, _ := os.Executable()
	spec := &landlock.Spec{Plan: s.plan, Path: exe, Argv: []string{exe}}
	cmd, f, err := landlock.Command(context.Background(), spec, 0)
	require.NoError(t, err)
	defer f.Close()
	var stderr bytes.Buffer
	cmd.Env = []string{envAct + "=caps"}
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{f}
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 125, ee.ExitCode())
	require.Contains(t, stderr.String(), filepath.Join(s.ws, ".git")+": a link is now on the way")

	require.NoError(t, os.Remove(filepath.Join(s.ws, ".git")))
	require.NoError(t, os.WriteFile(filepath.Join(s.ws, ".git"), nil, 0o644))
	cmd, f2, err := landlock.Command(context.Background(), spec, 0)
	require.NoError(t, err)
	defer f2.Close()
	stderr.Reset()
	cmd.Env = []string{envAct + "=caps"}
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{f2}
	require.ErrorAs(t, cmd.Run(), &ee)
	require.Equal(t, 125, ee.ExitCode())
	require.Contains(t, stderr.String(), "was a directory when the plan was made, is not a directory now")
}
