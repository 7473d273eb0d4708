package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/policy"
)

// policyFlags are the POLICY flags shared by run, profile and explain
// (DESIGN.md §4). Paths must be absolute, except --workspace, which is made
// absolute against the current directory on purpose: "--workspace ." is
// the common case and the result is shown by 'cordon profile'.
type policyFlags struct {
	file                                  string
	deny, readonly, writable, baseWritabl []string
	restrict                              bool
	workspace                             string
	allowRead                             []string
	allowGitWrites                        bool
	agentsRoot, agent, parent             string
}

func (pf *policyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&pf.file, "policy", "", "read the five-field policy from `FILE` (JSON)")
	appendTo := func(dst *[]string) func(string) error {
		return func(s string) error { *dst = append(*dst, s); return nil }
	}
	fs.Func("deny", "deny reading and writing `PATH` (repeatable)", appendTo(&pf.deny))
	fs.Func("readonly", "make `PATH` read-only (repeatable)", appendTo(&pf.readonly))
	fs.Func("writable", "make `PATH` writable (repeatable)", appendTo(&pf.writable))
	fs.Func("base-writable", "grant writes under `PATH` (repeatable)", appendTo(&pf.baseWritabl))
	fs.BoolVar(&pf.restrict, "restrict-writes", false, "deny writes outside writable roots")
	fs.StringVar(&pf.workspace, "workspace", "", "preset: `DIR` writable, private TMPDIR, restrictWrites, auto-run files protected, credentials denied")
	fs.Func("allow-read", "with --workspace: leave credential store `PATH` readable (repeatable)", appendTo(&pf.allowRead))
	fs.BoolVar(&pf.allowGitWrites, "allow-git-writes", false, "with --workspace: let the sandbox git add/commit; git config, hooks, modules/ and info/ stay read-only")
	fs.StringVar(&pf.agentsRoot, "agents-root", "", "preset: deny `DIR` except the agent's own and its parent's directories")
	fs.StringVar(&pf.agent, "agent", "", "with --agents-root: this agent's `ID` (DIR/ID writable)")
	fs.StringVar(&pf.parent, "parent", "", "with --agents-root: the parent agent's `ID` (DIR/ID read-only)")
}

const policyHelp = `Policy (flags combine into one five-field policy; see 'cordon profile'):
  --policy FILE          JSON with baseWritableRoots, deniedRoots, readonlyRoots,
                         writableRoots, restrictWrites (unknown keys are errors)
  --deny P, --readonly P, --writable P, --base-writable P, --restrict-writes
  --workspace DIR        DIR writable, a private TMPDIR, writes elsewhere denied,
                         every git directory in DIR read-only (git status, diff
                         and log work; git add and commit do not), shell rc
                         files, .vscode, .claude, ... protected, credential
                         stores under HOME denied
  --allow-git-writes     with --workspace: let the sandbox git add and commit;
                         config, hooks, modules/, info/ stay read-only, but a
                         hostile sandbox can then still plant what your next
                         git command on the host obeys (see README)
  --allow-read P         with --workspace: keep credential store P readable
  --agents-root DIR --agent ID [--parent ID]
                         DIR denied, DIR/ID writable, DIR/PARENT read-only
The most specific root decides each path; paths are resolved through symlinks.
`

// empty reports whether no policy flag was given at all.
func (pf *policyFlags) empty() bool {
	return pf.file == "" && len(pf.deny)+len(pf.readonly)+len(pf.writable)+len(pf.baseWritabl) == 0 &&
		!pf.restrict && pf.workspace == "" && pf.agentsRoot == ""
}

// build compiles the flags into one policy. tmpDir is the private TMPDIR
// of the workspace preset ("" without it).
func (pf *policyFlags) build() (p policy.FsSandboxPolicy, tmpDir string, err error) {
	if pf.file != "" {
		p, err = policy.Load(pf.file)
		if err != nil {
			return p, "", err
		}
	}
	for _, l := range []struct {
		flag  string
		paths []string
	}{{"--deny", pf.deny}, {"--readonly", pf.readonly}, {"--writable", pf.writable}, {"--base-writable", pf.baseWritabl}, {"--allow-read", pf.allowRead}} {
		for _, path := range l.paths {
			if path == "" || !filepath.IsAbs(path) {
				return p, "", fmt.Errorf("%s %q: give an absolute path", l.flag, path)
			}
		}
	}
	p.Merge(policy.FsSandboxPolicy{
		DeniedRoots:       pf.deny,
		ReadonlyRoots:     pf.readonly,
		WritableRoots:     pf.writable,
		BaseWritableRoots: pf.baseWritabl,
		RestrictWrites:    pf.restrict,
	})
	if len(pf.allowRead) > 0 && pf.workspace == "" {
		return p, "", fmt.Errorf("--allow-read needs --workspace")
	}
	if pf.allowGitWrites && pf.workspace == "" {
		return p, "", fmt.Errorf("--allow-git-writes needs --workspace")
	}
	if pf.workspace != "" {
		dir, err := filepath.Abs(pf.workspace)
		if err != nil {
			return p, "", fmt.Errorf("--workspace %q: %w", pf.workspace, err)
		}
		opt := policy.WorkspaceOptions{AllowRead: pf.allowRead, ScanCache: launcher.ScanCacheDir(), GitWrites: pf.allowGitWrites}
		ws, err := policy.Workspace(dir, opt)
		if err != nil {
			return p, "", fmt.Errorf("--workspace %q: %w", pf.workspace, err)
		}
		p.Merge(ws)
		// Every other writable root named on the command line gets the
		// same protections as the workspace.
		for _, w := range append(append([]string{}, pf.writable...), pf.baseWritabl...) {
			rw, err := policy.Resolve(w)
			if err != nil {
				return p, "", fmt.Errorf("--writable %q: %w", w, err)
			}
			prot, err := policy.Protections(rw, policy.WorkspaceOptions{ScanCache: opt.ScanCache, GitWrites: opt.GitWrites})
			if err != nil {
				return p, "", fmt.Errorf("--writable %q: %w", w, err)
			}
			p.Merge(prot)
		}
		tmpDir = policy.PrivateTmpDir(ws.WritableRoots[0]) // [0] is the resolved DIR
	}
	switch {
	case pf.agentsRoot != "":
		ag, err := policy.Agents(pf.agentsRoot, pf.agent, pf.parent)
		if err != nil {
			return p, "", fmt.Errorf("--agents-root %q: %w", pf.agentsRoot, err)
		}
		p.Merge(ag)
	case pf.agent != "" || pf.parent != "":
		return p, "", fmt.Errorf("--agent and --parent need --agents-root")
	}
	return p, tmpDir, nil
}

// printNotes tells the user what the presets saw in writable places and
// did not follow (a pointer out of the workspace, a derived root inside a
// denied one, a scan cut short): on stderr, one line each.
func printNotes(e *env, cmd string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "cordon: %s: note: %s\n", cmd, n)
	}
}

// policyNotes canonicalizes p for its notes; a policy that does not
// canonicalize has none here (the launch reports the error).
func policyNotes(p policy.FsSandboxPolicy) []string {
	c, err := policy.Canonicalize(p)
	if err != nil {
		return nil
	}
	return c.Notes()
}
