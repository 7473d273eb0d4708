package demo

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/internal/state"
)

// refusing stands in for the sandbox: the shell step's command fails
// without running.
func refusing(_ context.Context, _, _ string, _ []string, _, stderr io.Writer) (int, error) {
	io.WriteString(stderr, "refused\n")
	return 1, nil
}

// unconfined runs the shell step's command on the host, as a sandbox
// that does not hold would.
func unconfined(ctx context.Context, ws, command string, _ []string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws, stdout, stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), nil
		}
		return -1, err
	}
	return 0, nil
}

func TestRunGoesAsScripted(t *testing.T) {
	t.Setenv(state.EnvDir, filepath.Join(t.TempDir(), "state")) // the user key a kept log is keyed with
	log := filepath.Join(t.TempDir(), "demo.jsonl")
	var out bytes.Buffer
	ok, err := Run(context.Background(), &out, Options{AuditPath: log, Backend: "auto", Spawn: refusing})
	require.NoError(t, err)
	require.True(t, ok, out.String())
	steps := script("/outside")
	for i, s := range steps {
		require.Contains(t, out.String(), s.title, "step %d", i+1)
	}
	require.NotContains(t, out.String(), "!!")
	require.Contains(t, out.String(), "Every step went as scripted.")
	key, err := audit.UserKey()
	require.NoError(t, err)
	recs, err := audit.Verify(log, key)
	require.NoError(t, err)
	require.Len(t, recs, 3*len(steps), "request, permission and result for each call")
}

// The host check, not the runner's report, says whether the shell step
// escaped: a shell that ran unconfined is caught.
func TestRunCatchesAnEscape(t *testing.T) {
	var out bytes.Buffer
	ok, err := Run(context.Background(), &out, Options{Backend: "auto", Spawn: unconfined})
	require.NoError(t, err)
	require.False(t, ok, out.String())
	require.Contains(t, out.String(), "escaped.txt exists: the shell command escaped the sandbox")
	require.True(t, strings.HasSuffix(strings.TrimSpace(out.String()), "Some steps did not go as scripted (marked !!)."), out.String())
}

// unusableBackend is a backend that cannot work on this OS.
func unusableBackend() string {
	if runtime.GOOS == "darwin" {
		return "bwrap"
	}
	return "seatbelt"
}

// With no sandbox, a shell command the rules deny is still blocked before
// any sandbox is needed; only the approved one fails closed.
func TestRunWithoutASandbox(t *testing.T) {
	var out bytes.Buffer
	ok, err := Run(context.Background(), &out, Options{Backend: unusableBackend(), Spawn: refusing})
	require.NoError(t, err)
	require.True(t, ok, out.String())
	require.NotContains(t, out.String(), "!!")
	require.Equal(t, 1, strings.Count(out.String(), "NO SANDBOX"), out.String())
}

// A kept log that cannot be written stops the demo before any step.
func TestRunBadAuditStopsAtOnce(t *testing.T) {
	t.Setenv(state.EnvDir, filepath.Join(t.TempDir(), "state"))
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real.jsonl"), nil, 0o600))
	require.NoError(t, os.Symlink("real.jsonl", link))
	var out bytes.Buffer
	ok, err := Run(context.Background(), &out, Options{AuditPath: link, Backend: "auto", Spawn: refusing})
	require.False(t, ok)
	require.ErrorIs(t, err, audit.ErrSymlink)
	require.ErrorContains(t, err, "--audit "+link)
	require.Empty(t, out.String(), "no step may be played")
}

// TestRecord: the steps reported to Record are the session's, in order,
// each as scripted.
func TestRecord(t *testing.T) {
	var got []StepReport
	ok, err := Run(context.Background(), io.Discard, Options{Backend: "auto", Spawn: refusing, Record: func(s StepReport) { got = append(got, s) }})
	if err != nil || !ok {
		t.Fatalf("Run: ok %v, err %v", ok, err)
	}
	if len(got) != len(script("/x")) {
		t.Fatalf("%d steps recorded, want %d", len(got), len(script("/x")))
	}
	for _, s := range got {
		if !s.AsScripted || s.Outcome != s.Expected || s.RuleID == "" {
			t.Errorf("step %+v", s)
		}
	}
}
