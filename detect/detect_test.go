package detect_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// isolate points every input of detection at t's own directories.
func isolate(t testing.TB) (cacheDir, probeLog string) {
	t.Helper()
	dir := t.TempDir()
	cacheDir, probeLog = filepath.Join(dir, "cache"), filepath.Join(dir, "probes.log")
	t.Setenv(state.EnvDir, filepath.Join(cacheDir, "cordon"))
	t.Setenv(detect.EnvProbeLog, probeLog)
	t.Setenv(detect.EnvSandbox, "")
	t.Setenv(detect.EnvBwrap, "")
	detect.Reset()
	t.Cleanup(detect.Reset)
	return cacheDir, probeLog
}

func logLines(t testing.TB, name string) int {
	t.Helper()
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// copyBwrap makes a private, trusted copy whose metadata the test controls.
func copyBwrap(t *testing.T, from string) string {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	to := filepath.Join(t.TempDir(), "bwrap")
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return to
}

// TestDetectCache is the warm-launch proof: the first process probes once,
// the next ones read the disk cache and probe nothing, and a changed
// binary or a corrupt cache file brings the probe back.
func TestDetectCache(t *testing.T) {
	real := testenv.RequireBwrap(t)
	cacheDir, probeLog := isolate(t)
	bw := copyBwrap(t, real.Path)
	t.Setenv(detect.EnvBwrap, bw)
	ctx := context.Background()
	cacheFile := filepath.Join(cacheDir, "cordon", "detect-bwrap.json")

	cold := detect.Detect(ctx, "bwrap")
	require.True(t, cold.Usable, cold.Reason)
	require.Equal(t, "bwrap", cold.Backend)
	require.Equal(t, bw, cold.Path)
	require.Equal(t, real.Version, cold.Version)
	require.Equal(t, 1, detect.Probes())
	require.Equal(t, 1, logLines(t, probeLog))
	fi, err := os.Stat(cacheFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.Equal(t, cold, detect.Detect(ctx, "bwrap"), "in-process hit")
	require.Equal(t, 1, detect.Probes())

	detect.Reset() // a new process
	require.Equal(t, cold, detect.Detect(ctx, "bwrap"), "disk hit")
	require.Equal(t, 0, detect.Probes())
	require.Equal(t, 1, logLines(t, probeLog))

	// Touching the binary (a package upgrade would) invalidates the key.
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(bw, later, later))
	detect.Reset()
	require.True(t, detect.Detect(ctx, "bwrap").Usable)
	require.Equal(t, 1, detect.Probes())
	require.Equal(t, 2, logLines(t, probeLog))

	// A corrupt cache is ignored and rewritten.
	require.NoError(t, os.WriteFile(cacheFile, []byte("\x00garbage"), 0o600))
	detect.Reset()
	require.True(t, detect.Detect(ctx, "bwrap").Usable)
	require.Equal(t, 1, detect.Probes())
	b, err := os.ReadFile(cacheFile)
	require.NoError(t, err)
	require.True(t, json.Valid(b), "rewritten cache: %s", b)

	// Probe never reads the cache.
	detect.Reset()
	require.True(t, detect.Probe(ctx, "bwrap").Usable)
	require.Equal(t, 1, detect.Probes())
}

func TestDetectIgnoresAnUnverifiedSentinel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the bwrap sentinel is checked on Linux")
	}
	isolate(t)
	t.Setenv(detect.EnvSandbox, "bwrap")
	defer detect.FakeInsideBwrap(false)()
	r := detect.Detect(context.Background(), "bwrap")
	require.False(t, r.Nested, "a variable set on the host must not switch the sandbox off")
}

func TestDetectNested(t *testing.T) {
	_, probeLog := isolate(t)
	t.Setenv(detect.EnvSandbox, "bwrap")
	defer detect.FakeInsideBwrap(true)()
	for _, fn := range []func(context.Context, string) detect.Result{detect.Detect, detect.Probe} {
		r := fn(context.Background(), "auto")
		require.True(t, r.Usable)
		require.True(t, r.Nested)
		require.Equal(t, "bwrap", r.Backend)
		require.Contains(t, r.Reason, "already inside a cordon sandbox (CORDON_SANDBOX=bwrap)")
	}
	require.Equal(t, 0, detect.Probes())
	require.Equal(t, 0, logLines(t, probeLog))
}

func TestUntrustedOverride(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bwrap exists only on Linux")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "bwrap")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	require.NoError(t, os.Chmod(exe, 0o777)) // umask-proof

	tests := []struct{ name, override, want string }{
		{"relative", "bin/bwrap", "not an absolute path"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"world-writable", exe, "group- or world-writable"},
		{"not a file", dir, "not an executable file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			t.Setenv(detect.EnvBwrap, tc.override)
			r := detect.Detect(context.Background(), "bwrap")
			require.False(t, r.Usable)
			require.Empty(t, r.Path, "an untrusted binary is never reported as the backend")
			require.Contains(t, r.Reason, detect.EnvBwrap)
			require.Contains(t, r.Reason, tc.want)
			require.Contains(t, r.Reason, "fix:")
		})
	}
}

func TestOtherBackends(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	r := detect.Detect(ctx, "chroot")
	require.False(t, r.Usable)
	require.Equal(t, "none", r.Backend)
	require.Contains(t, r.Reason, `unknown backend "chroot"`)

	if runtime.GOOS == "linux" {
		r = detect.Detect(ctx, "seatbelt")
		require.Equal(t, detect.Result{Backend: "seatbelt", Reason: "seatbelt (sandbox-exec) exists only on macOS"}, r)
	}
}

// On Linux auto is the native backend wherever it is usable, else bwrap
// (docs/design.md: bwrap resolves bind sources following links).
func TestAutoPrefersNative(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.NotApplicable(t, "auto's choice between two backends is Linux's")
	}
	testenv.RequireBwrap(t)
	ctx := context.Background()
	want := "bwrap"
	if detect.Detect(ctx, "native").Usable {
		want = "native"
	}
	got := detect.Detect(ctx, "auto")
	require.True(t, got.Usable, got.Reason)
	require.Equal(t, want, got.Backend)
}

// A fresh probe of auto probes what auto picks, not always bwrap.
func TestProbeAutoPicksAsDetect(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.NotApplicable(t, "auto's choice between two backends is Linux's")
	}
	testenv.RequireBwrap(t)
	isolate(t)
	ctx := context.Background()
	want := detect.Detect(ctx, "auto")
	require.True(t, want.Usable, want.Reason)
	for _, backend := range []string{"auto", ""} {
		got := detect.Probe(ctx, backend)
		require.True(t, got.Usable, got.Reason)
		require.Equal(t, want.Backend, got.Backend, "Probe(%q)", backend)
	}
}

// Where neither namespace backend is usable, auto takes landlock and says
// why; where none is, the reason names all three.
func TestAutoFallsBackToLandlock(t *testing.T) {
	res := map[string]detect.Result{
		"native":   {Backend: "native", Reason: "native-why"},
		"bwrap":    {Backend: "bwrap", Reason: "bwrap-why"},
		"landlock": {Backend: "landlock", Usable: true, Reason: "ok: landlock"},
	}
	get := func(b string) detect.Result { return res[b] }
	got := detect.AutoLinux(get)
	require.Equal(t, "landlock", got.Backend)
	require.True(t, got.Usable)
	require.True(t, got.Fallback)
	require.Equal(t, "user namespaces are unavailable here (native: native-why; bwrap: bwrap-why); landlock confines without them: ok: landlock", got.Reason)

	res["bwrap"] = detect.Result{Backend: "bwrap", Usable: true}
	got = detect.AutoLinux(get)
	require.Equal(t, "bwrap", got.Backend)
	require.False(t, got.Fallback)

	res["bwrap"] = detect.Result{Backend: "bwrap", Reason: "bwrap-why"}
	res["landlock"] = detect.Result{Backend: "landlock", Reason: "landlock-why"}
	got = detect.AutoLinux(get)
	require.False(t, got.Usable)
	require.Equal(t, "bwrap-why; and the native backend: native-why; and the landlock backend: landlock-why", got.Reason)
}
