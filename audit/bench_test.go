package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// BenchmarkAppend is one record's cost: the no-follow walk to the log, the
// lock, the anchor checks, one line, two fsyncs, the anchor in place, and
// for a named log cordon's own anchor in its state directory.
func BenchmarkAppend(b *testing.B) {
	data := map[string]any{"name": "Bash", "arguments": map[string]string{"command": "go test ./..."}}
	b.Run("named", func(b *testing.B) {
		dir, _ := filepath.EvalSymlinks(b.TempDir())
		_ = os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700)
		l, _ := Open(filepath.Join(dir, "a", "b", "audit.jsonl"), testKey)
		for b.Loop() {
			if err := l.Append(KindRequest, "t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-state", func(b *testing.B) {
		dir, _ := filepath.EvalSymlinks(b.TempDir())
		b.Setenv(state.EnvDir, filepath.Join(dir, "state"))
		l, err := OpenUser("", "bench.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := l.Append(KindRequest, "t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkVerify verifies a log of 1000 records.
func BenchmarkVerify(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	path := filepath.Join(dir, "audit.jsonl")
	l, _ := Open(path, testKey)
	for i := range 1000 {
		if err := l.Append(KindRequest, "t", map[string]int{"i": i}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, err := Verify(path, testKey); err != nil {
			b.Fatal(err)
		}
	}
}
