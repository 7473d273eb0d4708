package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// A test that does what cannot be undone in the test process (kill
// itself, exec, take on a restriction, run inside a sandbox) runs a
// helper test function of the same binary in a child process instead:
//
//	func TestKilled(t *testing.T) {
//		cmd := testenv.Subprocess(t, "TestHelperHang", dir)
//		...
//	}
//
//	func TestHelperHang(t *testing.T) {
//		dir := testenv.InSubprocess(t) // skips in an ordinary run
//		...
//	}
//
// The child runs only that function (-test.run=^NAME$) and finds its
// argument in its environment.
const (
	envSubprocess    = "CORDON_TEST_SUBPROCESS"
	envSubprocessArg = "CORDON_TEST_SUBPROCESS_ARG"
)

// SubprocessArgs is the command line, and what to add to the environment,
// that run the test function name of this test binary alone in a new
// process, with arg for InSubprocess. It is for children started another
// way than by exec.Command (inside a sandbox); Subprocess builds the
// command.
func SubprocessArgs(name, arg string) (argv, env []string) {
	return []string{os.Args[0], "-test.run=^" + name + "$"},
		[]string{envSubprocess + "=" + name, envSubprocessArg + "=" + arg}
}

// Subprocess returns a command that runs the test function name of this
// test binary alone in a new process, with the test's environment and arg
// for InSubprocess. Start, wait for or kill it as the test needs.
//
// The child's TMPDIR is a directory of t's: a child that is killed or
// execs never runs its own cleanups, so what its t.TempDir made is
// removed with t's instead of staying in /tmp.
func Subprocess(t testing.TB, name, arg string) *exec.Cmd {
	t.Helper()
	argv, env := SubprocessArgs(name, arg)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "TMPDIR="+t.TempDir())
	return cmd
}

// InSubprocess begins a helper test function: in the child that
// Subprocess (or SubprocessArgs) started for it, it returns the argument
// it was given; in any other run it skips t, which is no test of its own.
func InSubprocess(t *testing.T) string {
	t.Helper()
	if os.Getenv(envSubprocess) != t.Name() {
		t.Skip("a helper, run only in a child process (testenv.Subprocess)")
	}
	return os.Getenv(envSubprocessArg)
}
