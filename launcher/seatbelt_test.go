package launcher

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeatbeltFailure: a sandbox-exec that exits before starting the
// command is never reported as the command's status.
func TestSeatbeltFailure(t *testing.T) {
	err := seatbeltFailure("/usr/bin/make", 65, recheck{code: 65, stderr: "sandbox-exec: unbound variable: TIOCSTI\n"})
	require.ErrorIs(t, err, ErrProfile)
	var ee *exec.ExitError
	require.False(t, errors.As(err, &ee), "must not look like the command's exit status")
	require.ErrorContains(t, err, `does not compile on this macOS`)
	require.ErrorContains(t, err, `"sandbox-exec: unbound variable: TIOCSTI"`)
	require.ErrorContains(t, err, "/usr/bin/make")

	err = seatbeltFailure("/usr/bin/make", 71, recheck{code: 71, stderr: "sandbox-exec: sandbox_apply: Operation not permitted\n"})
	require.ErrorIs(t, err, ErrProfile)
	require.ErrorContains(t, err, "sandbox_apply: Operation not permitted")

	err = seatbeltFailure("/usr/bin/make", 65, recheck{err: errors.New("fork failed")})
	require.ErrorIs(t, err, ErrProfile)
	require.ErrorContains(t, err, "fork failed")

	// The profile applies: sandbox-exec could not execute the command.
	err = seatbeltFailure("/x/tool", 71, recheck{})
	require.NotErrorIs(t, err, ErrProfile)
	var xe *exec.Error
	require.True(t, errors.As(err, &xe))
	require.Equal(t, "/x/tool", xe.Name)
	require.False(t, errors.Is(err, fs.ErrNotExist))
}

// TestWaitJudgesTheLauncher: Wait hands the judge the exit status and,
// when it objects, returns its error with ProcessState nil, so cordon run
// takes the cordon-error path (125) and not the command's status.
func TestWaitJudgesTheLauncher(t *testing.T) {
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		still  bool
		status string
	}{{"launcher failed", true, "65"}, {"command ran", false, "65"}, {"signalled", true, "kill"}} {
		t.Run(tc.name, func(t *testing.T) {
			script := "exit " + tc.status
			if tc.status == "kill" {
				script = "kill -9 $$"
			}
			inner := exec.Command(sh, "-c", script)
			c := &Cmd{Path: "/usr/bin/make"}
			var gotPid int
			c.launchCheck = func(pid int) func(*os.ProcessState) error {
				gotPid = pid
				if !tc.still {
					return nil
				}
				return func(st *os.ProcessState) error {
					if !st.Exited() {
						return nil
					}
					return seatbeltFailure(c.Path, st.ExitCode(), recheck{code: st.ExitCode(), stderr: "sandbox-exec: bad\n"})
				}
			}
			require.NoError(t, c.start(inner, func() {}))
			err := c.Wait()
			require.Equal(t, c.Process.Pid, gotPid)
			switch {
			case tc.status == "kill":
				require.NotNil(t, c.ProcessState)
			case tc.still:
				require.ErrorIs(t, err, ErrProfile)
				require.Nil(t, c.ProcessState)
			default:
				var ee *exec.ExitError
				require.True(t, errors.As(err, &ee))
				require.Equal(t, 65, c.ProcessState.ExitCode())
			}
		})
	}
}
