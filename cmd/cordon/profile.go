package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/shellquote"
	"github.com/cordon-sandbox/cordon/launcher"
)

var profileCommand = &command{
	name: "profile", summary: "print the canonical policy and what the backend would execute",
	usage: "[POLICY] [--backend auto|bwrap|native|landlock|seatbelt] [--network on|off] [--allow-domain P]... [--json] [-- CMD...]",
	// policyHelp's pointer to 'cordon profile' is this command.
	help:    profileHelp + "\n" + strings.Replace(policyHelp, "; see 'cordon profile'", "", 1),
	maxArgs: -1,
	setup: func(fs *flag.FlagSet) action {
		o := &profileOpts{}
		o.pf.register(fs)
		sandboxFlag(fs, &o.backend, "`BACKEND` to render for: auto, bwrap, native, landlock or seatbelt", "none is no sandbox, so there is nothing to render")
		fs.Var(&o.network, "network", "network access: `on|off`")
		fs.BoolVar(&o.asJSON, "json", false, `print {"policy","backend","argv"[,"command"][,"sbpl","params"][,"network"][,"warnings"]}`)
		return o.run
	},
}

const profileHelp = `Prints the policy in canonical form (absolute, symlink-free, sorted) and
exactly what 'cordon run' would execute with it: bwrap's argument list;
for the native backend, cordon itself as the sandbox's init with the
descriptor of its spec, and the mounts and command that spec holds; for
landlock, the Landlock rules, the directories they freeze and every place
they are stricter than the policy; or the Seatbelt profile and its
parameters. Nothing is created or run. A
launch passes bwrap's arguments through a file descriptor (--args FD);
they are shown inline here, and the seccomp program it passes the same
way (--seccomp FD) is described.

Examples:
  cordon profile --workspace .
  cordon profile --workspace . --backend seatbelt --json
`

// profileOpts are profile's flags.
type profileOpts struct {
	pf      policyFlags
	backend launcher.Backend
	network onOff
	asJSON  bool
}

func (o *profileOpts) run(ctx context.Context, e *env, args []string) int {
	o.pf.hostNetwork = bool(o.network)
	comp, err := o.pf.compose(nil)
	if err != nil {
		return composeFailed(e, err)
	}
	if comp.Network != nil && o.network {
		return errorf(e, exitCordonError, "--network on and a domain allowlist (%s): pick one", strings.Join(comp.Network.AllowText(), " "))
	}
	printNotes(e, comp.Canonical.Notes())
	r, err := launcher.Render(ctx, comp.Policy, string(o.backend), bool(o.network), comp.Network, args)
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	r.UnixSockets = comp.UnixSockets
	warning := o.pf.writesWarning(comp)
	if warning != "" {
		errorf(e, 0, "warning: %s", warning)
	}
	if o.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		var warnings []string
		if warning != "" {
			warnings = []string{warning}
		}
		enc.Encode(struct {
			*launcher.Rendered
			Warnings []string `json:"warnings,omitempty"`
		}{r, warnings})
		return exitOK
	}
	// Escaped line by line as a whole: paths in it (derived roots, mounts,
	// bwrap's argv) are named by what the workspace holds.
	var out strings.Builder
	printProfile(&out, r, o.network)
	io.WriteString(e.stdout, shownLines(out.String()))
	return exitOK
}

// printProfile prints r for people.
func printProfile(w io.Writer, r *launcher.Rendered, network onOff) {
	fmt.Fprintf(w, "backend: %s\nrestrictWrites: %v\n", r.Backend, r.Policy.RestrictWrites)
	if r.Nested {
		fmt.Fprintf(w, "nested: this runs inside a cordon sandbox (%s) already; 'cordon run' runs the command directly under it, which confines it, and applies nothing below\n", r.Backend)
	}
	for _, f := range []struct {
		name  string
		paths []string
	}{{"deniedRoots", r.Policy.DeniedRoots}, {"readonlyRoots", r.Policy.ReadonlyRoots},
		{"writableRoots", r.Policy.WritableRoots}, {"baseWritableRoots", r.Policy.BaseWritableRoots}} {
		fmt.Fprintf(w, "%s:", f.name)
		if len(f.paths) == 0 {
			fmt.Fprint(w, " (none)")
		}
		fmt.Fprintln(w)
		for _, p := range f.paths {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(r.Made) > 0 {
		fmt.Fprintf(w, "writable roots that do not exist yet, made on the host before the launch (they stay):\n  %s\n", strings.Join(r.Made, "\n  "))
	}
	if r.Seccomp != "" && r.Backend == "landlock" {
		fmt.Fprintf(w, "%s (installed by cordon's init, with a listener it hands to cordon, which decides those calls by the plan's rules)\n", r.Seccomp)
	} else if r.Seccomp != "" && r.Backend == "native" {
		fmt.Fprintf(w, "%s (installed by cordon's init before it runs the command)\n", r.Seccomp)
	} else if r.Seccomp != "" {
		fmt.Fprintf(w, "%s (the program goes to bwrap as --seccomp FD)\n", r.Seccomp)
	}
	if r.Landlock != "" {
		fmt.Fprintf(w, "landlock: %s\n", r.Landlock)
		if len(r.LandlockRules) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(r.LandlockRules, "\n  "))
		}
	}
	if len(r.Mounts) > 0 {
		fmt.Fprintf(w, "mounts (after \"/\", /proc and /dev, in this order):\n  %s\n", strings.Join(r.Mounts, "\n  "))
	}
	if n := r.Network; n != nil {
		fmt.Fprintf(w, "network: only through cordon's proxy, %s inside\n  allow: %s\n", n.Proxy, strings.Join(n.AllowDomains, " "))
		if len(n.DenyDomains) > 0 {
			fmt.Fprintf(w, "  deny: %s\n", strings.Join(n.DenyDomains, " "))
		}
		fmt.Fprintf(w, "  enforcement: %s\n", n.Enforcement)
	} else {
		fmt.Fprintf(w, "network: %s\n", network.String())
	}
	for i, s := range r.UnixSockets {
		if i == 0 {
			fmt.Fprintln(w, "host Unix sockets handed over (the socket found there, by inode; the sandbox gets what it gives):")
		}
		fmt.Fprintf(w, "  %s (%v)\n", s.Path, s.ID)
	}
	fmt.Fprintln(w, "argv:")
	fmt.Fprintf(w, "  %s\n", shellJoin(r.Argv))
	if r.Backend == "landlock" && !r.Nested && len(r.Argv) > 0 {
		fmt.Fprintf(w, "  (cordon itself as the sandbox's init, started as /proc/self/exe; descriptor %s holds its spec:\n"+
			"  the Landlock rules above, the filter and the command, which it runs in place once confined)\n", r.Argv[len(r.Argv)-1])
		fmt.Fprintln(w, "command:")
		fmt.Fprintf(w, "  %s\n", shellJoin(r.Command))
	}
	if r.Backend == "native" && !r.Nested && len(r.Argv) > 0 {
		fmt.Fprintf(w, "  (cordon itself as the sandbox's init, started as /proc/self/exe and named cordon-init;\n"+
			"  descriptor %s holds its spec: the mounts above, the filter and the command)\n", r.Argv[len(r.Argv)-1])
		fmt.Fprintln(w, "command:")
		fmt.Fprintf(w, "  %s\n", shellJoin(r.Command))
	}
	if r.SBPL != "" {
		// The parameters are the -D flags of argv above.
		fmt.Fprintf(w, "sbpl (written to PROFILE_FILE at launch):\n%s\n", r.SBPL)
	}
}

// shellJoin quotes argv so it can be pasted into a POSIX shell.
func shellJoin(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteString(" ")
			if strings.HasPrefix(a, "--") {
				b.WriteString("\\\n    ")
			}
		}
		b.WriteString(shellquote.Word(a))
	}
	return b.String()
}
