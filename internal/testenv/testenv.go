// Package testenv gates tests on what this host's kernel can do. Every
// test that needs a real sandbox goes through it, so a missing feature is
// a visible skip with its reason — and on CI, where
// CORDON_REQUIRE_BACKEND names the backend, a failure instead, so a green
// run cannot hide a skipped suite. Subprocess runs a helper test function
// in a child of the test binary, for what a test cannot undo in its own
// process.
package testenv

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordon-sandbox/cordon/detect"
)

// EnvRequire names the backends that must work, comma-separated (e.g.
// "bwrap,native,landlock" on Linux CI).
const EnvRequire = "CORDON_REQUIRE_BACKEND"

// RequireBwrap skips t unless a real bwrap probe succeeds on this host
// (once per test binary, never cached on disk, so a stale verdict cannot
// hide a broken host). With CORDON_REQUIRE_BACKEND=bwrap it fails instead.
func RequireBwrap(t testing.TB) detect.Result {
	t.Helper()
	return require(t, "bwrap", probeBwrap())
}

// RequireNative is RequireBwrap for cordon's own Linux backend.
func RequireNative(t testing.TB) detect.Result {
	t.Helper()
	return require(t, "native", probeNative())
}

// RequireLandlock is RequireBwrap for the landlock backend.
func RequireLandlock(t testing.TB) detect.Result {
	t.Helper()
	return require(t, "landlock", probeLandlock())
}

// The probes, each run once per test binary.
var (
	probeBwrap    = sync.OnceValue(func() detect.Result { return detect.Probe(context.Background(), "bwrap") })
	probeNative   = sync.OnceValue(func() detect.Result { return detect.Probe(context.Background(), "native") })
	probeLandlock = sync.OnceValue(func() detect.Result { return detect.Probe(context.Background(), "landlock") })
)

// Required reports whether CORDON_REQUIRE_BACKEND names backend.
func Required(backend string) bool {
	return slices.Contains(strings.Split(os.Getenv(EnvRequire), ","), backend)
}

func require(t testing.TB, backend string, r detect.Result) detect.Result {
	t.Helper()
	if r.Usable && !r.Nested {
		return r
	}
	reason := r.Reason
	if r.Nested {
		reason = "already inside a cordon sandbox, which cannot be nested: " + r.Reason
	}
	if Required(backend) {
		t.Fatalf("needs a working %s (%s=%s): %s", backend, EnvRequire, backend, reason)
	}
	t.Skipf("needs a working %s: %s", backend, reason)
	return r
}
