package detect

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// sandboxExec is the only sandbox-exec cordon runs; never found via PATH.
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltProbeProfile allows everything: the probe asks only whether a
// profile can be applied here at all (it cannot inside another sandbox).
const seatbeltProbeProfile = "(version 1)(allow default)"

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
	tctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(tctx, sandboxExec, "-p", seatbeltProbeProfile, "/usr/bin/true")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stderr = &stderr
	cmd.WaitDelay = 250 * time.Millisecond
	err := cmd.Run()
	f.Stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case tctx.Err() != nil:
		f.TimedOut = true
	case errors.As(err, &ee):
		f.ExitCode = ee.ExitCode()
	case err != nil:
		f.ExecErr = err.Error()
	}
}
