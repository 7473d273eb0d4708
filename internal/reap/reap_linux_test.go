package reap_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/reap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// TestKillAll: a subreaper's KillAll ends its children, the orphans
// reparented to it (a daemon that forked twice and called setsid among
// them) and the children those had, and leaves no zombie. It runs in a
// child (TestHelperKillAll), which becomes the subreaper, prints the
// pids it saw and, once KillAll has returned and waitid finds no child,
// "done".
func TestKillAll(t *testing.T) {
	cmd := testenv.Subprocess(t, "TestHelperKillAll", "")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var pids []int
	r := bufio.NewScanner(out)
	for r.Scan() {
		l := r.Text()
		if p, ok := strings.CutPrefix(l, "pid "); ok {
			n, _ := strconv.Atoi(p)
			pids = append(pids, n)
		}
		if l == "done" {
			break
		}
	}
	require.GreaterOrEqual(t, len(pids), 3, "the helper's children and orphans")
	// The helper checked, by waitid, that no child is left at all.
	require.NoError(t, cmd.Wait())
}

func TestHelperKillAll(t *testing.T) {
	testenv.InSubprocess(t)
	require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
	tasks, err := reap.OpenTasks()
	require.NoError(t, err)
	defer tasks.Close()
	// A child, and a shell that leaves a job and a setsid daemon (each
	// with a child of its own) and exits: they are reparented here.
	c := exec.Command("sleep", "1000")
	require.NoError(t, c.Start())
	sh := exec.Command("sh", "-c", `sh -c 'sleep 1000' </dev/null >/dev/null 2>&1 &
( setsid sh -c 'sleep 1000' </dev/null >/dev/null 2>&1 & )
exit 0`)
	require.NoError(t, sh.Run())
	var kids []int
	for end := time.Now().Add(10 * time.Second); len(kids) < 3 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		kids, err = tasks.Children(0)
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, len(kids), 3, "children: %v", kids)
	for _, k := range kids {
		os.Stdout.WriteString("pid " + strconv.Itoa(k) + "\n")
	}
	require.NoError(t, tasks.KillAll(0))
	var info unix.Siginfo
	require.ErrorIs(t, unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil), syscall.ECHILD)
	os.Stdout.WriteString("done\n")
}
