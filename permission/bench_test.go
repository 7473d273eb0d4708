package permission

import "testing"

func benchDecide(b *testing.B, r Request) {
	f := newFixture(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.d.Decide(r)
	}
}

func BenchmarkDecideBashSimple(b *testing.B) {
	benchDecide(b, req("bash", map[string]string{"command": "git diff --stat"}))
}

func BenchmarkDecideBashPipeline(b *testing.B) {
	benchDecide(b, req("bash", map[string]string{"command": `go test ./... 2>&1 | tee out.log && grep -c FAIL out.log || echo "ok: $(date)"`}))
}

func BenchmarkDecideBashHardDeny(b *testing.B) {
	benchDecide(b, req("bash", map[string]string{"command": `env FOO=1 timeout 5 bash -c 'sudo apt install x'`}))
}

func BenchmarkDecideReadInside(b *testing.B) {
	benchDecide(b, req("read_file", map[string]string{"path": "src/main.go"}))
}

func BenchmarkDecideWriteInside(b *testing.B) {
	benchDecide(b, req("write_file", map[string]string{"path": "src/new.go", "content": "package main\n"}))
}

func BenchmarkDecideReadEscape(b *testing.B) {
	benchDecide(b, req("read_file", map[string]string{"path": "escape/secret"}))
}

func BenchmarkDecideGlob(b *testing.B) {
	benchDecide(b, req("glob", map[string]string{"pattern": "src/**/*.go"}))
}
