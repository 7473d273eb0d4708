package policy_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/policy"
)

func mkdirs(tb testing.TB, paths []string) {
	tb.Helper()
	for _, p := range paths {
		require.NoError(tb, os.MkdirAll(p, 0o755))
	}
}

func benchCanonicalize(b *testing.B, p policy.FsSandboxPolicy, roots int) {
	c, err := policy.Canonicalize(p)
	require.NoError(b, err)
	require.Len(b, c.Roots(), roots)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Canonicalize(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalize2000Existing resolves 2,000 roots that all exist,
// so every component of every path is looked up (once per call, cached
// across roots that share ancestors):
//
//	go test ./policy -run '^$' -bench Canonicalize -benchmem
func BenchmarkCanonicalize2000Existing(b *testing.B) {
	p := scale.Policy2000(b.TempDir())
	mkdirs(b, p.WritableRoots)
	benchCanonicalize(b, p, 2000)
}

// BenchmarkCanonicalize2000Missing resolves 2,000 roots below a directory
// that exists but whose trees do not: resolution stops at the first missing
// component and appends the rest lexically.
func BenchmarkCanonicalize2000Missing(b *testing.B) {
	benchCanonicalize(b, scale.Policy2000(b.TempDir()), 2000)
}

// BenchmarkResolve is one path through Resolve, uncached: the launcher
// resolves the command path this way.
func BenchmarkResolve(b *testing.B) {
	target := "/bin/true"
	if _, err := exec.LookPath(target); err != nil {
		b.Skip("no /bin/true")
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Resolve(target); err != nil {
			b.Fatal(err)
		}
	}
}
