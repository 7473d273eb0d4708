package detect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"runtime"
	"strings"

	"github.com/cordon-sandbox/cordon/seatbelt"
)

// sandboxExec is the only sandbox-exec cordon runs; never found via PATH.
const sandboxExec = seatbelt.SandboxExec

// seatbeltProbeArgs is the probe's command line after sandbox-exec: the
// fixed part of the real profile with a representative path in each kind
// of rule (seatbelt.ProbeProfile), applied to /usr/bin/true. A construct
// this macOS does not compile fails here, with sandbox-exec's message,
// rather than in every launch.
func seatbeltProbeArgs() ([]string, error) {
	prof, err := seatbelt.ProbeProfile()
	if err != nil {
		return nil, err
	}
	args := []string{"-p", prof.SBPL}
	for _, p := range prof.Params {
		args = append(args, "-D", p.Name+"="+p.Value)
	}
	return append(args, "/usr/bin/true"), nil
}

// seatbeltProbeID names the probe's profile in the cache key, so a cordon
// whose profile changed probes again instead of trusting an older verdict.
func seatbeltProbeID() string {
	args, err := seatbeltProbeArgs()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(args, "\x00")))
	return "probe-" + hex.EncodeToString(sum[:8])
}

func probeSeatbelt(ctx context.Context) Result {
	f := seatbeltFacts{GOOS: runtime.GOOS}
	r := Result{Backend: "seatbelt"}
	if f.GOOS == "darwin" {
		if _, err := os.Stat(sandboxExec); err != nil {
			f.Missing = true
		} else {
			r.Path = sandboxExec
			f.Version = osProductVersion()
			runSeatbeltProbe(ctx, &f)
		}
	}
	r.Version = f.Version
	r.Usable, r.Reason = classifySeatbelt(f)
	return r
}

func runSeatbeltProbe(ctx context.Context, f *seatbeltFacts) {
	args, err := seatbeltProbeArgs()
	if err != nil {
		f.RenderErr = err.Error()
		return
	}
	tctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	end := runProbe(tctx, nil, sandboxExec, args...)
	f.Stderr, f.ExitCode, f.TimedOut, f.ExecErr = end.stderr, end.exitCode, end.timedOut, end.execErr
}
