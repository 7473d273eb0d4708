package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/buildinfo"
	"github.com/cordon-sandbox/cordon/launcher"
)

var detectCommand = &command{
	name: "detect", summary: "check that a sandbox backend really works here, and why not",
	usage: "[--backend auto|bwrap|native|landlock|seatbelt] [--json] [--fresh]",
	help:  detectHelp,
	setup: func(fs *flag.FlagSet) action {
		o := &detectOpts{}
		sandboxFlag(fs, &o.backend, "`BACKEND` to check: auto (on Linux native where usable, else bwrap, else landlock; seatbelt on macOS), bwrap, native, landlock or seatbelt", "none is no sandbox, so there is nothing to check")
		fs.BoolVar(&o.asJSON, "json", false, `print {"backend","path","version","usable","reason"} as JSON`)
		fs.BoolVar(&o.fresh, "fresh", false, "run the probe even if a cached answer is valid (the cache is left as is)")
		return o.run
	},
}

const detectHelp = `Runs the sandbox backend once with every isolation feature cordon uses
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
`

// detectOpts are detect's flags.
type detectOpts struct {
	backend       launcher.Backend
	asJSON, fresh bool
}

// detectJSON is the shape of docs/design.md, section 4: these five keys,
// and "landlock" for the native backend.
type detectJSON struct {
	Backend string `json:"backend"`
	Path    string `json:"path"`
	Version string `json:"version"`
	Usable  bool   `json:"usable"`
	Reason  string `json:"reason"`
	// Landlock, for native only: which Landlock ABI is in force, or that
	// the sandbox has one wall.
	Landlock string `json:"landlock,omitempty"`
	// Cordon is which cordon answered (cordon version), so a kept report
	// names it.
	Cordon buildinfo.Info `json:"cordon"`
}

func (o *detectOpts) run(ctx context.Context, e *env, _ []string) int {
	backend := string(o.backend)
	var r detect.Result
	if o.fresh {
		r = detect.Probe(ctx, backend)
	} else {
		r = detect.Detect(ctx, backend)
	}
	if o.asJSON {
		b, err := json.Marshal(detectJSON{r.Backend, r.Path, r.Version, r.Usable, r.Reason, r.Landlock, buildinfo.Get()})
		if err != nil {
			return errorf(e, exitCordonError, "encode json: %v", err)
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
	// The native and landlock backends are the kernel's own: their
	// version is the kernel's, bwrap's is bubblewrap's.
	label := "version:"
	if r.Backend == "native" || r.Backend == "landlock" {
		label = "kernel: "
	}
	fmt.Fprintf(w, "%s %s\n", label, dash(r.Version))
	fmt.Fprintf(w, "usable:  %s\n", yes[r.Usable])
	if r.Nested {
		fmt.Fprintf(w, "nested:  yes\n")
	}
	fmt.Fprintf(w, "reason:  %s\n", r.Reason)
	if r.Landlock != "" {
		fmt.Fprintf(w, "landlock: %s\n", r.Landlock)
	}
}
