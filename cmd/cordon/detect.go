package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/cordon-sandbox/cordon/detect"
)

func init() {
	register("detect", "check that a sandbox backend really works here, and why not", cmdDetect)
}

const detectHelp = `Usage: cordon detect [--backend auto|bwrap|seatbelt] [--json] [--fresh]

Runs the sandbox backend once with every isolation feature cordon uses
(for bwrap: user, pid, ipc and net namespaces, all capabilities dropped,
a fresh /proc) and reports whether it works. When it does not, the reason
names the cause and the fix: bubblewrap not installed, unprivileged user
namespaces disabled by a sysctl, Ubuntu's AppArmor restriction, a
container's seccomp profile, a setuid/file-caps misconfiguration.

The answer is cached in cordon's state directory (~/.local/state/cordon,
which no sandbox can read or write) and
reused until the bwrap binary, the kernel, a relevant sysctl or your uid
changes, so 'cordon run' pays for no probe. bwrap is taken from
/usr/bin, /usr/local/bin or /bin (or $CORDON_BWRAP), never from PATH.
Inside a cordon sandbox (CORDON_SANDBOX set) it reports that instead.

Examples:
  cordon detect                   human-readable verdict
  cordon detect --json | jq .usable
  cordon detect --fresh           probe again, ignoring the cache

Exit status: 0 the backend is usable, 1 it is not, 2 bad usage.

Flags:
`

// detectJSON is the shape of docs/design.md, section 4, exactly these five keys.
type detectJSON struct {
	Backend string `json:"backend"`
	Path    string `json:"path"`
	Version string `json:"version"`
	Usable  bool   `json:"usable"`
	Reason  string `json:"reason"`
}

func cmdDetect(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("detect", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	backend := fs.String("backend", "auto", "`BACKEND` to check: auto (bwrap on Linux, seatbelt on macOS), bwrap or seatbelt")
	asJSON := fs.Bool("json", false, `print {"backend","path","version","usable","reason"} as JSON`)
	fresh := fs.Bool("fresh", false, "run the probe even if a cached answer is valid (the cache is left as is)")
	usageTo := func(w io.Writer) {
		fmt.Fprint(w, detectHelp)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(e.stderr)
	}
	fs.Usage = func() { usageTo(e.stderr) }
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			usageTo(e.stdout) // asked for, so not an error: stdout, exit 0
			return exitOK
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return errorf(e, exitUsage, "detect: unexpected argument %q; usage: cordon detect [--backend B] [--json] [--fresh]", fs.Arg(0))
	}
	switch *backend {
	case "auto", "bwrap", "native", "seatbelt":
	default:
		return errorf(e, exitUsage, "detect: --backend %q: want auto, bwrap, native or seatbelt", *backend)
	}

	var r detect.Result
	if *fresh {
		r = detect.Probe(ctx, *backend)
	} else {
		r = detect.Detect(ctx, *backend)
	}
	if *asJSON {
		b, err := json.Marshal(detectJSON{r.Backend, r.Path, r.Version, r.Usable, r.Reason})
		if err != nil {
			return errorf(e, exitCordonError, "detect: encode json: %v", err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		printDetect(e.stdout, r)
	}
	if !r.Usable {
		return exitFail
	}
	return exitOK
}

func printDetect(w io.Writer, r detect.Result) {
	yes := map[bool]string{true: "yes", false: "no"}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	fmt.Fprintf(w, "backend: %s\n", r.Backend)
	fmt.Fprintf(w, "path:    %s\n", dash(r.Path))
	fmt.Fprintf(w, "version: %s\n", dash(r.Version))
	fmt.Fprintf(w, "usable:  %s\n", yes[r.Usable])
	if r.Nested {
		fmt.Fprintf(w, "nested:  yes\n")
	}
	fmt.Fprintf(w, "reason:  %s\n", r.Reason)
}
