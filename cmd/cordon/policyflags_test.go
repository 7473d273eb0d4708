package main

import (
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/conformance"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestComposeSameAsConformance pins that 'cordon run' and the conformance
// suite's executors build their policies the same way: for every
// combination of presets and flags, the flags a case renders, parsed by
// cordon's flag set, compose to exactly what the case's executor composes.
// A suite that judged a copy of cordon's composition would prove nothing
// about cordon.
func TestComposeSameAsConformance(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	mk := func(rel string) string {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(p, 0o755))
		return p
	}
	ws := mk("ws")
	if _, err := exec.LookPath("git"); err == nil {
		require.NoError(t, exec.Command("git", "init", "-q", ws).Run())
		require.NoError(t, exec.Command("git", "init", "-q", mk("ws/vendor/lib")).Run())
	}
	home := mk("ws/home")
	mk("ws/home/.ssh")
	extra := mk("extra")
	agents := mk("agents")
	mk("agents/a1")
	mk("agents/p0")
	file := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"writableRoots":["`+mk("fromfile")+`"],"deniedRoots":["`+mk("fromfile/secret")+`"]}`), 0o644))
	env := []string{"HOME=" + home, "PATH=" + mk("ws/bin") + ":" + mk("ws/tools") + ":/usr/bin:/bin:.", "LANG=C"}
	exe := filepath.Join(mk("ws/build"), "cordon")
	getenv := func(k string) string {
		for _, kv := range env {
			if len(kv) > len(k) && kv[:len(k)+1] == k+"=" {
				return kv[len(k)+1:]
			}
		}
		return ""
	}

	options := []func(*conformance.Policy){
		func(p *conformance.Policy) { p.Workspace = ws },
		func(p *conformance.Policy) { p.Deny = []string{mk("denied")} },
		func(p *conformance.Policy) { p.Readonly = []string{mk("ro")} },
		func(p *conformance.Policy) { p.Writable = []string{extra} },
		func(p *conformance.Policy) { p.Base = []string{mk("base")} },
		func(p *conformance.Policy) { p.Restrict = true },
		func(p *conformance.Policy) { p.File = file },
		func(p *conformance.Policy) { p.AllowRead = []string{filepath.Join(home, ".ssh")} },
		func(p *conformance.Policy) { p.AgentsRoot, p.Agent, p.Parent = agents, "a1", "p0" },
		func(p *conformance.Policy) { p.WritablePathDirs = []string{filepath.Join(ws, "tools")} },
	}
	composed := 0
	for mask := 0; mask < 1<<len(options); mask++ {
		var p conformance.Policy
		for i, o := range options {
			if mask&(1<<i) != 0 {
				o(&p)
			}
		}
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var pf policyFlags
		pf.register(fs)
		require.NoError(t, fs.Parse(p.Flags()), "flags %v", p.Flags())
		s, err := pf.spec(getenv, []string{exe})
		require.NoError(t, err)
		cli, cliErr := workspace.Compose(s)
		suite, suiteErr := workspace.Compose(p.Spec(env, exe))
		if cliErr != nil || suiteErr != nil {
			require.Equal(t, cliErr, suiteErr, "flags %v", p.Flags())
			continue
		}
		if d := cmp.Diff(suite.Policy, cli.Policy, cmp.AllowUnexported(policy.FsSandboxPolicy{})); d != "" {
			t.Fatalf("flags %v: cordon run composes another policy than the conformance executor (-suite +cli):\n%s", p.Flags(), d)
		}
		require.Equal(t, suite.TmpDir, cli.TmpDir)
		require.Equal(t, suite.Workspace, cli.Workspace)
		require.Equal(t, suite.Canonical.IDs(), cli.Canonical.IDs())
		composed++
	}
	require.Greater(t, composed, 1<<(len(options)-1), "most combinations must compose")
}

// TestAllowUnixSocketFlag pins --allow-unix-socket: repeatable, made
// absolute as read, joined by a policy file's "allowUnixSockets",
// resolved and recorded by identity; an empty value is bad usage, and
// a path that is not a socket fails the composition naming the flag
// and the path.
func TestAllowUnixSocketFlag(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	listen := func(name string) string {
		p := filepath.Join(dir, name)
		l, err := net.Listen("unix", p)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return p
	}
	a, b := listen("a.sock"), listen("b.sock")
	require.NoError(t, os.Symlink(a, filepath.Join(dir, "link.sock")))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	file := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"allowUnixSockets":["`+b+`"]}`), 0o644))
	t.Chdir(dir)

	parse := func(args ...string) (*workspace.Composed, error) {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var pf policyFlags
		pf.register(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		s, err := pf.spec(func(string) string { return "" }, nil)
		require.NoError(t, err)
		return workspace.Compose(s)
	}
	comp, err := parse("--policy", file, "--allow-unix-socket", "link.sock", "--allow-unix-socket", a)
	require.NoError(t, err)
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(a, &st))
	idA := policy.FileID{Dev: uint64(st.Dev), Ino: st.Ino}
	require.NoError(t, syscall.Stat(b, &st))
	idB := policy.FileID{Dev: uint64(st.Dev), Ino: st.Ino}
	// The file's first, then the flags'; the link resolves to a, named once.
	require.Equal(t, []policy.HostSocket{{Path: b, ID: idB}, {Path: a, ID: idA}}, comp.UnixSockets)

	_, err = parse("--allow-unix-socket", "")
	require.ErrorContains(t, err, errEmptyPath.Error()) // the flag package says it: exit 2
	_, err = parse("--allow-unix-socket", plain)
	require.EqualError(t, err, `--allow-unix-socket "`+plain+`": `+plain+` is not a Unix socket (a regular file)`)
	_, err = parse("--allow-unix-socket", filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, `--allow-unix-socket "`+filepath.Join(dir, "missing")+`": `)
	require.ErrorIs(t, err, os.ErrNotExist)
}
