package gate_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// rootedDecider is entryDecider as native's and bwrap's (gate.Rooted):
// names resolved beneath the caller's root, every create performed by the
// gate, on a wall thread (gate.ThreadRestricter) that this test leaves
// unconfined, so the benchmark times the hand-over, not Landlock.
type rootedDecider struct{ entryDecider }

func (rootedDecider) OwnRoot() bool         { return true }
func (rootedDecider) RestrictThread() error { return nil }

// BenchmarkEntryCreate times 3,000 O_CREAT opens (and closes) of new
// files in one directory, in a child without the gate and under it, in
// one run, and reports each per create and the ratio to the ungated
// loop (BENCHMARKS.md): go test ./gate -run '^$' -bench EntryCreate
// -benchtime 1x. "gated": the gate performs each create on its serving
// thread (the landlock backend's path where the kernel would not allow
// it); "rooted": as under native, resolved in the caller's root and
// performed on the wall thread.
func BenchmarkEntryCreate(b *testing.B) {
	const n = 3000
	per := map[string]float64{}
	for _, mode := range []string{"ungated", "gated", "rooted"} {
		base, allowed, _ := gateDirs(b)
		dir := filepath.Join(allowed, "d")
		require.NoError(b, unix.Mkdir(dir, 0o755))
		arg := fmt.Sprintf("%s %d %s", mode, n, dir)
		var out string
		yes := func(string, bool) bool { return true }
		d := entryDecider{gate.Funcs{Change: yes, Read: yes}, entries{allowed}}
		switch mode {
		case "ungated":
			o, err := testenv.Subprocess(b, "TestHelperEntryCreateLoop", arg).CombinedOutput()
			require.NoError(b, err, "%s", o)
			out = string(o)
		case "gated":
			out = runUnderUnixGateT(b, "TestHelperEntryCreateLoop", arg, d)
		default:
			out = runUnderUnixGateT(b, "TestHelperEntryCreateLoop", arg, rootedDecider{d})
		}
		var ns float64
		for _, l := range strings.Split(out, "\n") {
			if _, err := fmt.Sscanf(l, "elapsed %g", &ns); err == nil {
				break
			}
		}
		require.NotZero(b, ns, "child:\n%s", out)
		ents, err := filepath.Glob(filepath.Join(dir, "f*"))
		require.NoError(b, err)
		require.Len(b, ents, n, "the files made, on the host (%s)", base)
		per[mode] = ns / n
		b.ReportMetric(ns/n, mode+"-ns/create")
	}
	b.ReportMetric(per["gated"]/per["ungated"], "gated/ungated")
	b.ReportMetric(per["rooted"]/per["ungated"], "rooted/ungated")
}

// TestHelperEntryCreateLoop: "MODE N DIR": makes DIR/f0..f(N-1) with
// O_CREAT|O_EXCL, under the entry gate's filter unless MODE is ungated;
// prints the loop's time.
func TestHelperEntryCreateLoop(t *testing.T) {
	var mode, dir string
	var n int
	if _, err := fmt.Sscanf(testenv.InSubprocess(t), "%s %d %s", &mode, &n, &dir); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	if mode != "ungated" {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		l, err := gate.Install(bwrap.Program(gate.EntryRules(gate.Rules(bwrap.RulesFor(bwrap.SocketsFor(true))))))
		if err != nil {
			fmt.Printf("install failed: %v\n", err)
			return
		}
		if err := gate.SendFd(3, l); err != nil {
			t.Fatal(err)
		}
		unix.Close(l)
		unix.Close(3)
	}
	start := time.Now()
	for i := range n {
		fd, err := unix.Open(filepath.Join(dir, fmt.Sprintf("f%d", i)), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		unix.Close(fd)
	}
	fmt.Printf("elapsed %d\n", time.Since(start).Nanoseconds())
}
