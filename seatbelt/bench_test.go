package seatbelt

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/policy"
)

// BenchmarkRender2000 measures canonicalization plus rendering:
//
//	go test ./seatbelt -run '^$' -bench Render2000 -benchmem
func BenchmarkRender2000(b *testing.B) {
	pol := scale.Policy2000(b.TempDir())
	c, err := policy.Canonicalize(pol)
	require.NoError(b, err)
	require.Len(b, c.Roots(), 2000)
	prof, err := Render(c, Options{})
	require.NoError(b, err)
	for b.Loop() {
		c, err := policy.Canonicalize(pol)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(prof.SBPL)), "sbpl-bytes")
	b.ReportMetric(float64(paramBytes(prof.Params)), "param-bytes")
}

// BenchmarkRenderOnly2000 is the renderer alone, canonicalization excluded.
func BenchmarkRenderOnly2000(b *testing.B) {
	c, err := policy.Canonicalize(scale.Policy2000(b.TempDir()))
	require.NoError(b, err)
	for b.Loop() {
		if _, err := Render(c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRender2000AgreesWithModel keeps the benchmark's policy honest: the
// large profile is still the model.
func TestRender2000AgreesWithModel(t *testing.T) {
	if testing.Short() {
		t.Skip("large policy")
	}
	c, err := policy.Canonicalize(scale.Policy2000("/cordon-bench"))
	require.NoError(t, err)
	prof, err := Render(c, Options{})
	require.NoError(t, err)
	all := probesFor(c, nil)
	var probes []string
	for i := 0; i < len(all); i += len(all)/150 + 1 { // TestRulesSplit covers a long base
		probes = append(probes, all[i])
	}
	checkAgainstModel(t, c, prof, probes)
}
