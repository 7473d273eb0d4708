package testenv

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/cordon-sandbox/cordon/detect"
)

var (
	seatbeltOnce   sync.Once
	seatbeltResult detect.Result
)

// NativeBackend is the backend of this operating system: bwrap on Linux,
// seatbelt on macOS, "" elsewhere.
func NativeBackend() string {
	switch runtime.GOOS {
	case "linux":
		return "bwrap"
	case "darwin":
		return "seatbelt"
	}
	return ""
}

// RequireBackend skips t unless a real probe of backend succeeds; with
// CORDON_REQUIRE_BACKEND naming it, it fails instead.
func RequireBackend(t testing.TB, backend string) detect.Result {
	t.Helper()
	switch backend {
	case "bwrap":
		return RequireBwrap(t)
	case "native":
		return RequireNative(t)
	case "landlock":
		return RequireLandlock(t)
	case "seatbelt":
		seatbeltOnce.Do(func() { seatbeltResult = detect.Probe(context.Background(), "seatbelt") })
		return require(t, "seatbelt", seatbeltResult)
	}
	if req := os.Getenv(EnvRequire); req != "" {
		t.Fatalf("needs a sandbox backend (%s=%s), and %s has none", EnvRequire, req, runtime.GOOS)
	}
	t.Skipf("needs a sandbox backend: %s has none", runtime.GOOS)
	return detect.Result{}
}

// Need skips t, stating what it needs and why it is missing, when err is
// not nil; with CORDON_REQUIRE_BACKEND set, it fails instead, so a CI run
// cannot hide a part of the suite that did not run.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if req := os.Getenv(EnvRequire); req != "" {
		t.Fatalf("needs %s (%s=%s): %v", what, EnvRequire, req, err)
	}
	t.Skipf("needs %s: %v", what, err)
}

// NeedNewer skips t, stating what it needs and why it is missing, when
// err is not nil and what is a kernel feature newer than any backend
// needs (used where present, a second wall): CORDON_REQUIRE_BACKEND does
// not turn this skip into a failure, as no host is required to have it.
func NeedNewer(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Skipf("needs %s (optional, newer than this kernel): %v", what, err)
	}
}

// NotApplicable skips a conformance case that cannot apply here (another
// backend's mechanism, a tool this host lacks, another kind of user). It
// never fails: such a case is reported, not passed.
func NotApplicable(t testing.TB, reason string) {
	t.Helper()
	t.Skipf("not applicable: %s", reason)
}
