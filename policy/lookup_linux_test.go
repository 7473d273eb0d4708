package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// swapAfter exchanges dir and link (renameat2 RENAME_EXCHANGE) right after
// resolveVia has looked up dir, once: the interleaving a sandboxed swapper
// hits by chance (race-stubs), made deterministic.
func swapAfter(t *testing.T, dir, link string) {
	t.Helper()
	done := false
	lookupHook = func(p string) {
		if p == dir && !done {
			done = true
			require.NoError(t, unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE))
		}
	}
	t.Cleanup(func() { lookupHook = nil })
}

// raceFixture is race-stubs' tree: ws/d, ws/l -> outside, outside/x59.
func raceFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "x59"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "l")))
	return ws, outside
}

// TestLookupDoesNotLookThroughASwappedParent: ws/d is a directory when
// resolution looks it up and a link to outside when it looks up ws/d/x59.
// By path, ws/d/x59 would pass for an existing directory of the workspace
// (it is outside/x59, no link recorded), and the policy would rest on that
// view; the lookup from the parent opened without following a link
// refuses instead.
func TestLookupDoesNotLookThroughASwappedParent(t *testing.T) {
	ws, outside := raceFixture(t)
	d, x59 := filepath.Join(ws, "d"), filepath.Join(ws, "d", "x59")
	swapAfter(t, d, filepath.Join(ws, "l"))
	r := newResolver()
	defer r.close()
	_, _, err := resolveVia(filepath.Join(x59, "a/b/c"), r)
	require.ErrorIs(t, err, errSwapped)
	require.Contains(t, err.Error(), "symbolic link", "race-stubs counts this refusal as the race met")
	_, cached := r.seen[x59]
	require.False(t, cached, "nothing recorded about ws/d/x59")

	// What a lookup by path reports in the same state: outside/x59, at ws/d/x59.
	li, err := lookupByPath(x59)
	require.NoError(t, err)
	fi, err := os.Lstat(filepath.Join(outside, "x59"))
	require.NoError(t, err)
	require.True(t, li.exists && li.dir && li.target == "")
	require.Equal(t, fileID(fi), li.id)
}

// TestCanonicalizeRefusesASwappedParent: the same interleaving through
// canonicalization (a launch's policy) refuses the policy.
func TestCanonicalizeRefusesASwappedParent(t *testing.T) {
	ws, _ := raceFixture(t)
	swapAfter(t, filepath.Join(ws, "d"), filepath.Join(ws, "l"))
	_, err := Canonicalize(FsSandboxPolicy{
		WritableRoots:  []string{ws},
		DeniedRoots:    []string{filepath.Join(ws, "d/x59/a/b/c")},
		RestrictWrites: true,
	})
	require.Error(t, err)
	require.True(t, errors.Is(err, errSwapped), "%v", err)
}

// TestLookupEntryAsLstat: without a swap, lookupEntry says what lstat says.
func TestLookupEntryAsLstat(t *testing.T) {
	ws, outside := raceFixture(t)
	for _, p := range []string{
		filepath.Join(ws, "d"), filepath.Join(ws, "l"), filepath.Join(ws, "missing"),
		filepath.Join(ws, "missing", "deeper"), filepath.Join(outside, "x59"),
		filepath.Join(ws, "l", "x59"), // a link in the parent: by path, it is followed
		"/", "/proc",
	} {
		want, err := lookupByPath(p)
		require.NoError(t, err, p)
		got, err := lookupEntry(p, nil)
		if p == filepath.Join(ws, "l", "x59") {
			require.ErrorIs(t, err, errSwapped, "a link in a parent resolution found free of links")
			continue
		}
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
	}
}
