package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
)

var explainCommand = &command{
	name: "explain", summary: "say what the policy allows on paths, and which root decides",
	usage:   "[POLICY] [--backend landlock] [--json] PATH|HOST[:PORT]|URL...",
	help:    explainHelp + "\n" + policyHelp,
	minArgs: 1, maxArgs: -1, missing: "no PATH given",
	// A flag after a path still shapes the policy: read as a path it
	// would be explained under a policy the user did not mean.
	anyOrder: true,
	setup: func(fs *flag.FlagSet) action {
		o := &explainOpts{}
		o.pf.register(fs)
		fs.BoolVar(&o.asJSON, "json", false, "print one JSON object per path")
		fs.StringVar(&o.backend, "backend", "", "also say where `BACKEND` is stricter than the policy: landlock (the other backends do as the policy says)")
		return o.run
	},
}

const explainHelp = `For each PATH, prints whether the sandbox may read and write it and the
root that decides: the deepest root containing the path wins. PATH is
resolved through symlinks first, as the kernel would; a relative PATH is
taken from the current directory. Flags may come before or after the
paths; after "--" everything is a path.

With --backend landlock, explain also says, for each PATH, where the
landlock backend is stricter than the policy and why (a directory it
freezes or cannot list, /dev and /proc), or "as the model".

With a network allowlist (--allow-domain), an argument that is a URL
(https://host/...), HOST:PORT, or a host name that is not a file here, is
a destination: explain prints whether the sandbox may reach it through
cordon's proxy and the pattern that decides. Nothing is looked up or
connected to; a name allowed only through a wildcard is still refused at
run time if it resolves to an internal address (loopback, private,
link-local).

Examples:
  cordon explain --workspace . .git/hooks/pre-commit src/main.go ~/.ssh/id_ed25519
  cordon explain --allow-domain @npm registry.npmjs.org evil.example:443 https://github.com/x
`

// explainOpts are explain's flags.
type explainOpts struct {
	pf      policyFlags
	asJSON  bool
	backend string
}

// landlockVerdict is a path's verdict with the landlock backend's
// differences from it.
type landlockVerdict struct {
	policy.Verdict
	Landlock []string `json:"landlock"`
}

func (o *explainOpts) run(_ context.Context, e *env, args []string) int {
	for _, in := range args {
		if in == "" {
			return usageError(e, "an empty PATH: name a file, a directory or a host")
		}
	}
	comp, err := o.pf.compose(nil)
	if err != nil {
		return composeFailed(e, err)
	}
	printNotes(e, comp.Canonical.Notes())
	c := comp.Canonical
	var ll *landlock.Plan
	switch o.backend {
	case "":
	case launcher.BackendLandlock:
		if ll, err = launcher.LandlockPlan(comp.Policy); err != nil {
			return errorf(e, exitCordonError, "%v", err)
		}
	default:
		return usageError(e, "--backend %q: only landlock is stricter than the policy; the other backends do as it says", o.backend)
	}
	// Every argument is answered before anything is printed, so an error
	// on one leaves no partial answer (a JSON stream cut short) behind.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for _, in := range args {
		if comp.Network != nil {
			if host, ports, ok, err := destination(in); err != nil {
				return errorf(e, exitCordonError, "%v", err)
			} else if ok {
				explainHost(&out, enc, o.asJSON, comp.Network, in, host, ports)
				continue
			}
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			return errorf(e, exitCordonError, "%q: %v", in, err)
		}
		rp, err := policy.Resolve(abs)
		if err != nil {
			return errorf(e, exitCordonError, "%v", err)
		}
		v := c.Explain(rp)
		var llLines []string
		if ll != nil {
			llLines = ll.Explain(rp)
			if !v.Read {
				llLines = ll.ExplainDenied(rp)
			}
		}
		if o.asJSON && ll != nil {
			enc.Encode(landlockVerdict{v, llLines})
			continue
		}
		if o.asJSON {
			enc.Encode(v)
			continue
		}
		name := rp
		if rp != abs {
			name = fmt.Sprintf("%s (as %s)", rp, in)
		}
		fmt.Fprintf(&out, "%s\n  read: %s  write: %s  %s\n", shown.String(name), yesNo(v.Read), yesNo(v.Write), shown.String(v.Reason))
		if r, ok := c.DecidingRoot(rp); policy.UnderTmp(rp) && (!ok || policy.Depth(r.Path) < policy.Depth(policy.TmpPath)) {
			// What /tmp is depends on the backend (policy.Canonical.WithTmp).
			fmt.Fprintf(&out, "  /tmp: native and bwrap mount the workspace's private TMPDIR there (read and write, kept between its launches, none of the host's files); landlock shows the host's /tmp as above and lets the sandbox make entries there and reach only its own, removed when it ends (unless a denied root below /tmp splits it: then read-only); seatbelt shows the host's /tmp as above\n")
		}
		if ll != nil {
			for _, l := range llLines {
				fmt.Fprintf(&out, "  landlock: %s\n", shown.String(l))
			}
		}
	}
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		return errorf(e, exitCordonError, "write: %v", err)
	}
	return exitOK
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no "
}

// destination reads in as a network destination: a URL, HOST:PORT, or a
// bare name that is not a file here. ports are the ports to answer for
// (the defaults for a bare name).
func destination(in string) (host string, ports []int, ok bool, err error) {
	if strings.Contains(in, "://") {
		u, err := url.Parse(in)
		if err != nil || u.Hostname() == "" {
			return "", nil, false, fmt.Errorf("%q: not a URL with a host", in)
		}
		p := map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ssh": 22, "git": 9418}[u.Scheme]
		if u.Port() != "" {
			if p, err = strconv.Atoi(u.Port()); err != nil {
				return "", nil, false, fmt.Errorf("%q: bad port", in)
			}
		}
		if p == 0 {
			return "", nil, false, fmt.Errorf("%q: no port for scheme %s; give one", in, u.Scheme)
		}
		return u.Hostname(), []int{p}, true, nil
	}
	if strings.ContainsRune(in, '/') {
		return "", nil, false, nil
	}
	if _, err := os.Lstat(in); err == nil {
		return "", nil, false, nil // a file of that name here: a path
	}
	if h, ps, err := net.SplitHostPort(in); err == nil {
		p, err := strconv.Atoi(ps)
		if err != nil || p < 1 || p > 65535 {
			return "", nil, false, fmt.Errorf("%q: port out of range", in)
		}
		return h, []int{p}, true, nil
	}
	return in, netpolicy.DefaultPorts, true, nil
}

// hostVerdict is explain's answer for one destination.
type hostVerdict struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
	// Internal: whether an internal address behind the name is allowed
	// too (the pattern names the host exactly).
	Internal bool   `json:"internalAllowed"`
	Reason   string `json:"reason"`
}

func explainHost(w io.Writer, enc *json.Encoder, asJSON bool, np *netpolicy.Policy, in, host string, ports []int) {
	for _, p := range ports {
		d := np.Decide(host, p)
		v := hostVerdict{Host: netpolicy.Normalize(host), Port: p, Allowed: d.Allowed, Rule: d.Rule(), Internal: d.Literal}
		switch {
		case d.Allowed && d.Literal:
			v.Reason = "allowed by " + d.Rule() + ", which names the host exactly (internal addresses too)"
		case d.Allowed:
			v.Reason = "allowed by " + d.Rule() + " (refused at run time if it resolves to an internal address)"
		case d.Deny:
			v.Reason = "refused by " + d.Rule()
		default:
			v.Reason = "refused: no pattern allows it; to allow it: --allow-domain " + netpolicy.Suggest(host, p)
		}
		if asJSON {
			enc.Encode(v)
			continue
		}
		verdict := "refused"
		if d.Allowed {
			verdict = "allowed"
		}
		fmt.Fprintf(w, "%s:%d (as %s)\n  network: %s  %s\n", v.Host, p, in, verdict, v.Reason)
	}
}
