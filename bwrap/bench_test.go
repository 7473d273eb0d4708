package bwrap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// osStat is the launcher's view of the host.
func osStat(p string) (exists, dir bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

func opts() bwrap.Options {
	return bwrap.Options{EmptyFile: "/nonexistent/empty", MaskRoot: "/run/cordon/masks", DisableUserns: true, Stat: osStat}
}

// fixture2000 is the 2,000-root policy over directories that exist, as in
// the launch benchmark (bench/launch).
func fixture2000(b *testing.B) policy.FsSandboxPolicy {
	p := scale.Policy2000(b.TempDir())
	for _, w := range p.WritableRoots {
		require.NoError(b, os.MkdirAll(w, 0o755))
	}
	return p
}

func reportArgs(b *testing.B, pl *bwrap.Plan) {
	n := 0
	for _, a := range pl.Args {
		n += len(a) + 1
	}
	b.ReportMetric(float64(len(pl.Args)), "args")
	b.ReportMetric(float64(n), "arg-bytes")
}

// BenchmarkRender2000 is canonicalization plus rendering of 2,000 roots,
// what a launch does before it execs bwrap:
//
//	go test ./bwrap -run '^$' -bench Render -benchmem
func BenchmarkRender2000(b *testing.B) {
	p := fixture2000(b)
	c, err := policy.Canonicalize(p)
	require.NoError(b, err)
	pl, err := bwrap.Render(c, opts())
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		c, err := policy.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bwrap.Render(c, opts()); err != nil {
			b.Fatal(err)
		}
	}
	reportArgs(b, pl)
}

// BenchmarkRenderOnly2000 is the renderer alone (its stats included).
func BenchmarkRenderOnly2000(b *testing.B) {
	c, err := policy.Canonicalize(fixture2000(b))
	require.NoError(b, err)
	b.ReportAllocs()
	var pl *bwrap.Plan
	for b.Loop() {
		if pl, err = bwrap.Render(c, opts()); err != nil {
			b.Fatal(err)
		}
	}
	reportArgs(b, pl)
}

// BenchmarkRenderWorkspace renders the --workspace preset of a small git
// work tree: the policy of every 'cordon run --workspace' launch.
func BenchmarkRenderWorkspace(b *testing.B) {
	base := b.TempDir()
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(ws, ".git", "hooks"), filepath.Join(home, ".ssh")} {
		require.NoError(b, os.MkdirAll(d, 0o755))
	}
	require.NoError(b, os.WriteFile(filepath.Join(ws, ".git", "config"), nil, 0o644))
	p, err := workspace.Preset(ws, workspace.Options{Home: home})
	require.NoError(b, err)
	c, err := policy.Canonicalize(p)
	require.NoError(b, err)
	b.ReportAllocs()
	var pl *bwrap.Plan
	for b.Loop() {
		if pl, err = bwrap.Render(c, opts()); err != nil {
			b.Fatal(err)
		}
	}
	reportArgs(b, pl)
}
