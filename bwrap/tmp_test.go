package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// A workspace under the host's /tmp (a CI clone, t.TempDir) keeps its own
// path inside, bound over the private /tmp, and a denied root in it stays
// masked; /tmp itself is the private directory, never the host's.
func TestPrivateTmpUnderRoots(t *testing.T) {
	ws, err := os.MkdirTemp("/tmp", "cordon-tmp-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Mkdir(filepath.Join(ws, "secret"), 0o700))
	c := canon(t, policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{ws}, DeniedRoots: []string{ws + "/secret"}})
	require.False(t, c.Access("/tmp/build.log", policy.Write), "without WithTmp /tmp is the host's")
	priv := root + "/private-tmp"
	d := c.WithTmp(priv)
	require.True(t, d.Access("/tmp/build.log", policy.Write))
	require.False(t, d.Access(ws+"/secret/x", policy.Read))
	require.False(t, c.Access("/tmp/build.log", policy.Write), "WithTmp changed c")

	pl, err := Render(d, Options{Stat: fakeFS(priv+"/", ws+"/", ws+"/secret/"), EmptyFile: "/e", MaskRoot: "/m"})
	require.NoError(t, err)
	at := func(args ...string) int {
		for i := range pl.Args {
			if slices.Equal(pl.Args[i:min(i+len(args), len(pl.Args))], args) {
				return i
			}
		}
		t.Fatalf("no %q in %q", args, pl.Args)
		return -1
	}
	tmp := at("--bind", priv, "/tmp")
	wsAt := at("--bind", ws, ws)
	require.Less(t, tmp, wsAt, "the workspace is bound after, over, the private /tmp")
	require.Less(t, wsAt, at("--ro-bind", filepath.Join("/m", pl.Masks[0].Key), ws+"/secret"))

	// A policy that names /tmp itself decides it as it says.
	ro := canon(t, policy.FsSandboxPolicy{ReadonlyRoots: []string{"/tmp"}})
	require.Same(t, ro, ro.WithTmp(priv))
}
