package launcher

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// inPlace is what the helper checks of one root inside the sandbox.
type inPlace struct {
	Path     string `json:"path"`
	Writable bool   `json:"w"`
	Denied   bool   `json:"d"`
}

// TestNativeMountsAllInPlace launches a policy of 4,000 roots (bwrap
// refuses it: 12,000 arguments) through the native backend and checks
// from inside that every root is a mount point of its own, read-only
// exactly where the model refuses writes, and a mask (traversable, not
// listable) where it refuses reads.
func TestNativeMountsAllInPlace(t *testing.T) {
	testenv.RequireNative(t)
	base := t.TempDir()
	var p policy.FsSandboxPolicy
	p.RestrictWrites = true
	for i := range 1000 {
		g := filepath.Join(base, fmt.Sprintf("t%04d", i))
		p.ReadonlyRoots = append(p.ReadonlyRoots, filepath.Join(g, "ro"))
		p.WritableRoots = append(p.WritableRoots, filepath.Join(g, "w"), filepath.Join(g, "w/d/c"))
		p.DeniedRoots = append(p.DeniedRoots, filepath.Join(g, "w/d"))
		require.NoError(t, os.MkdirAll(filepath.Join(g, "ro"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(g, "w/d/c"), 0o755))
	}
	canon, err := policy.Canonicalize(p)
	require.NoError(t, err)
	var want []inPlace
	for _, r := range canon.Roots() {
		want = append(want, inPlace{Path: r.Path, Writable: canon.Access(r.Path, policy.Write), Denied: !canon.Access(r.Path, policy.Read)})
	}
	require.GreaterOrEqual(t, len(want), 4000)
	file := filepath.Join(base, "want.json")
	b, err := json.Marshal(want)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))

	argv, env := testenv.SubprocessArgs("TestHelperMountsInPlace", file)
	c := Command(p, argv[0], argv[1:]...)
	c.Backend = BackendNative
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), fmt.Sprintf("in place: %d roots", len(want)), string(out))
}

func TestHelperMountsInPlace(t *testing.T) {
	file := testenv.InSubprocess(t) // for TestNativeMountsAllInPlace
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var want []inPlace
	require.NoError(t, json.Unmarshal(b, &want))
	// The mount on top at each mount point, as mountinfo lists mounts in
	// the order they were made: the last line for a path wins.
	top := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	require.NoError(t, err)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		top[unescapeMount(fields[4])] = fields[5]
	}
	f.Close()
	var bad []string
	for _, w := range want {
		opts, ok := top[w.Path]
		ro := ok && strings.Contains(","+opts+",", ",ro,")
		switch {
		case !ok:
			bad = append(bad, w.Path+": not a mount point")
		case ro == w.Writable:
			bad = append(bad, fmt.Sprintf("%s: mounted %s, the model says writable=%v", w.Path, opts, w.Writable))
		case w.Denied:
			fi, err := os.Lstat(w.Path)
			if err != nil || fi.Mode().Perm() != 0o111 {
				bad = append(bad, fmt.Sprintf("%s: denied but not a 0111 mask (%v, %v)", w.Path, fi, err))
			} else if _, err := os.ReadDir(w.Path); !errors.Is(err, fs.ErrPermission) {
				bad = append(bad, fmt.Sprintf("%s: denied but listable (%v)", w.Path, err))
			}
		case w.Writable:
			probe := filepath.Join(w.Path, ".probe")
			if err := os.WriteFile(probe, nil, 0o600); err != nil {
				bad = append(bad, fmt.Sprintf("%s: writable by the model, not inside: %v", w.Path, err))
			}
			os.Remove(probe)
		default:
			if err := os.WriteFile(filepath.Join(w.Path, ".probe"), nil, 0o600); !errors.Is(err, unix.EROFS) {
				bad = append(bad, fmt.Sprintf("%s: read-only by the model, a write gave %v", w.Path, err))
			}
		}
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("... and %d more", len(bad)-20))
		}
		fmt.Println(strings.Join(bad, "\n"))
		os.Exit(1)
	}
	fmt.Printf("in place: %d roots\n", len(want))
}

// TestExecNativeReportsStatusEarly: through the native backend, Exec
// returns the command's status as the init reports it (an *ExitStatus,
// ProcessState nil), with its output written and nothing of the sandbox
// left running; a signal's end is 128+N, as a shell gives it. With stdio
// a goroutine copies, Exec waits as Run does.
func TestExecNativeReportsStatusEarly(t *testing.T) {
	testenv.RequireNative(t)
	ws := t.TempDir()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	// In the workspace: a file of the user's outside the writable roots
	// would become a pipe cordon copies (its owner could chmod it through
	// the descriptor), and Exec then waits as Run does.
	out, err := os.Create(filepath.Join(ws, "out"))
	require.NoError(t, err)
	defer out.Close()
	for _, tc := range []struct {
		script string
		code   int
	}{
		{`echo hi; (trap '' HUP TERM; while :; do echo x >> alive; sleep 0.01; done) & sleep 0.1; exit 7`, 7},
		{`echo hi; kill -TERM $$`, 143},
	} {
		c := Command(p, "sh", "-c", tc.script)
		c.Backend, c.Dir = BackendNative, ws
		c.Stdout, c.Stderr = out, out
		err := c.Exec()
		var st *ExitStatus
		require.ErrorAs(t, err, &st)
		require.Equal(t, tc.code, st.Code)
		require.Nil(t, c.ProcessState)
	}
	b, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	require.Equal(t, "hi\nhi\n", string(b))
	fi, err := os.Stat(filepath.Join(ws, "alive"))
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond)
	fi2, err := os.Stat(filepath.Join(ws, "alive"))
	require.NoError(t, err)
	require.Equal(t, fi.Size(), fi2.Size(), "a process of the sandbox still writes after Exec returned")

	var buf strings.Builder
	c := Command(p, "sh", "-c", "echo copied; exit 3")
	c.Backend, c.Dir = BackendNative, ws
	c.Stdout = &buf
	err = c.Exec()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.ExitCode())
	require.NotNil(t, c.ProcessState)
	require.Equal(t, "copied\n", buf.String())
}

// A nil entry of ExtraFiles is a closed descriptor in the command, as
// os/exec makes it, through the native init too: the init's own runtime
// may hold a file at that number (the cgroup CPU limit), which the
// command must not inherit.
func TestNativeNilExtraFileIsClosed(t *testing.T) {
	testenv.RequireNative(t)
	ws := t.TempDir()
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	fmt.Fprintln(w, "from-fd-4")
	w.Close()
	c := Command(p, "sh", "-c", `if [ -e /proc/self/fd/3 ]; then echo "OPEN3 $(readlink /proc/self/fd/3)"; else echo CLOSED3; fi; cat <&4`)
	c.Backend = BackendNative
	c.ExtraFiles = []*os.File{nil, r}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "CLOSED3\nfrom-fd-4\n", string(out))
}
