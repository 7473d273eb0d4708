package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSteeredRootsOnlyRestrict plants, in a writable workspace, the links
// an earlier sandbox could have made under roots the user names there,
// and checks that each root is kept only where it restricts.
func TestSteeredRootsOnlyRestrict(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws := filepath.Join(dir, "ws")
	secret := filepath.Join(dir, "secret")   // denied by the policy
	outside := filepath.Join(dir, "outside") // readable, not writable
	for _, d := range []string{ws, secret, outside, filepath.Join(ws, "real")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o600))
	link := func(name, target string) string {
		p := filepath.Join(ws, name)
		require.NoError(t, os.Symlink(target, p))
		return p
	}
	toSecret := link("vendor", filepath.Join(secret, "key"))
	toOutside := link("cache", outside)
	toMissing := link("env", filepath.Join(outside, "nothere", "x"))
	toInside := link("in", filepath.Join(ws, "real"))
	toInsideMissing := link("in2", filepath.Join(ws, "real", "nothere"))

	for _, tt := range []struct {
		name string
		p    FsSandboxPolicy
		keep string // the canonical root that stays, "" when dropped
	}{
		{"writable outside the writable roots", FsSandboxPolicy{WritableRoots: []string{toOutside}}, ""},
		{"writable inside the workspace is a no-op", FsSandboxPolicy{BaseWritableRoots: []string{toInside}}, filepath.Join(ws, "real")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			p.RestrictWrites = true
			p.WritableRoots = append(p.WritableRoots, ws)
			p.DeniedRoots = append(p.DeniedRoots, secret)
			c, err := Canonicalize(p)
			require.NoError(t, err)
			var got []string
			for _, r := range c.Roots() {
				if r.Path != ws && r.Path != secret {
					got = append(got, r.Path)
				}
			}
			if tt.keep == "" {
				require.Empty(t, got)
				require.Len(t, c.Notes(), 1)
				require.Contains(t, c.Notes()[0], "ignored")
				require.Contains(t, c.Notes()[0], "symbolic link "+ws+"/")
			} else {
				require.Equal(t, []string{tt.keep}, got)
			}
			require.False(t, c.Access(filepath.Join(secret, "key"), Read), "the denied root stays closed")
			require.False(t, c.Access(filepath.Join(outside, "f"), Write), "the outside stays read-only")
		})
	}
	// A denied or read-only root through a link the sandbox can write is
	// refused: the link could be swapped for a real file of that name.
	for _, tt := range []struct {
		name, field, link string
		p                 FsSandboxPolicy
	}{
		{"readonly into a denied root", "readonlyRoots", toSecret, FsSandboxPolicy{ReadonlyRoots: []string{toSecret}}},
		{"readonly where reading is allowed", "readonlyRoots", toOutside, FsSandboxPolicy{ReadonlyRoots: []string{toOutside}}},
		{"denied at an existing target", "deniedRoots", toOutside, FsSandboxPolicy{DeniedRoots: []string{toOutside}}},
		{"denied at a missing target", "deniedRoots", toMissing, FsSandboxPolicy{DeniedRoots: []string{toMissing}}},
		{"readonly inside the workspace", "readonlyRoots", toInside, FsSandboxPolicy{ReadonlyRoots: []string{toInside}}},
		{"readonly below a link inside the workspace", "readonlyRoots", toInside, FsSandboxPolicy{ReadonlyRoots: []string{filepath.Join(toInside, "f")}}},
		{"denied missing inside the workspace", "deniedRoots", toInsideMissing, FsSandboxPolicy{DeniedRoots: []string{toInsideMissing}}},
	} {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			p := tt.p
			p.RestrictWrites = true
			p.WritableRoots = append(p.WritableRoots, ws)
			p.DeniedRoots = append(p.DeniedRoots, secret)
			_, err := Canonicalize(p)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.field+" ")
			require.Contains(t, err.Error(), tt.link+" is a symlink: ")
			require.Contains(t, err.Error(), "a link inside a writable root can be swapped")
		})
	}
}

// TestLinksOutsideWritablePlacesAreFollowed: a link the sandbox cannot
// write (the system's, the user's) is the user's to choose; roots through
// it are taken as named.
func TestLinksOutsideWritablePlacesAreFollowed(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.MkdirAll(filepath.Join(secret, "pub"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "s")))
	c, err := Canonicalize(FsSandboxPolicy{RestrictWrites: true, DeniedRoots: []string{secret},
		ReadonlyRoots: []string{filepath.Join(dir, "s", "pub")}})
	require.NoError(t, err)
	require.Empty(t, c.Notes())
	require.True(t, c.Access(filepath.Join(secret, "pub", "f"), Read))
}
