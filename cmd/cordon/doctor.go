package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/agents/setup"
	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/shown"
	"github.com/cordon-sandbox/cordon/internal/state"
)

var doctorCommand = &command{
	name: "doctor", summary: "check this machine's cordon setup and say how to fix what is wrong",
	usage: "[--dir DIR] [--json] [--strict]",
	help:  doctorHelp,
	setup: func(fs *flag.FlagSet) action {
		o := &doctorOpts{}
		pathVar(fs, &o.dir, "dir", ".", "the project `DIR` whose agent settings are checked (and the workspace the binary must be outside of)")
		fs.BoolVar(&o.asJSON, "json", false, `print an array of {"check","status","detail","fix"}`)
		fs.BoolVar(&o.strict, "strict", false, "exit 1 on a warning too, not only on a failure")
		return o.run
	},
}

const doctorHelp = `Checks what cordon needs on this machine, one line per finding:
ok, warn or fail, what is wrong, and the command or step that fixes it.

  backend        is a kernel sandbox usable here ('cordon detect' says why not)
  binary         this cordon is outside the project and outside anything a
                 sandbox of 'cordon run --workspace DIR' could write (else an
                 agent could replace the program that decides its calls)
  path           'cordon' on PATH is this binary
  hook AGENT     for claude-code, codex, gemini, copilot and cursor, in the
                 project (--dir) and under HOME: is cordon's hook installed,
                 does it run this binary, does a setting turn hooks off
                 (disableAllHooks, hooksConfig, [features] hooks = false),
                 can the settings file be parsed
  git            safe.bareRepository is explicit: a sandbox can plant a bare
                 repository (a directory with HEAD, objects/, refs/ and a
                 config) in the workspace, and git run inside it on the host
                 obeys that config (core.fsmonitor, hooks); explicit makes
                 git use a bare repository only when named with --git-dir
  state          cordon's state directory is a directory of yours, mode 0700
                 (it holds the audit key and what later launches trust)
  audit          the hook's default audit log verifies (keyed chain, anchor)

Doctor changes no setting and creates no directory.

Examples:
  cordon doctor
  cordon doctor --json | jq '.[] | select(.status != "ok")'

Exit status: 0 nothing failed (warnings are notes: a CI step does not fail
for one), 1 a check failed (with --strict, or warned), 2 bad usage, 125
doctor itself failed.
`

// finding is one line of doctor's report.
type finding struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
	Fix    string `json:"fix"`
}

// doctorOpts are doctor's flags.
type doctorOpts struct {
	dir    string
	asJSON bool
	strict bool
}

func (o *doctorOpts) run(ctx context.Context, e *env, _ []string) int {
	dir, err := realDir(o.dir)
	if err != nil {
		return errorf(e, exitCordonError, "--dir: %v", err)
	}
	exe, err := thisCordon()
	if err != nil {
		return errorf(e, exitCordonError, "%v", err)
	}
	home := os.Getenv("HOME")
	var found []finding
	found = append(found, checkBackend(ctx))
	found = append(found, checkBinary(exe, dir, home))
	found = append(found, checkPath(exe))
	found = append(found, checkHooks(exe, dir, home)...)
	found = append(found, checkGit(ctx))
	found = append(found, checkState())
	found = append(found, checkAudit())

	bad, failed := 0, 0
	for _, f := range found {
		if f.Status != "ok" {
			bad++
		}
		if f.Status == "fail" || (o.strict && f.Status != "ok") {
			failed++
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(found); err != nil {
			return errorf(e, exitCordonError, "encode json: %v", err)
		}
	} else {
		for _, f := range found {
			fmt.Fprintf(e.stdout, "%-4s  %-18s %s\n", f.Status, f.Check, shown.String(f.Detail)) // a repository's settings name the hook
			if f.Fix != "" {
				fmt.Fprintf(e.stdout, "      %-18s fix: %s\n", "", shown.String(f.Fix))
			}
		}
		if bad == 0 {
			fmt.Fprintf(e.stdout, "all %d checks passed\n", len(found))
		} else {
			fmt.Fprintf(e.stdout, "%d of %d checks need fixing\n", bad, len(found))
		}
	}
	if failed > 0 {
		return exitFail
	}
	return exitOK
}

// detectBackend is doctor's backend check (tests replace it: a probe
// re-executes the binary, here the test binary).
var detectBackend = func(ctx context.Context) detect.Result { return detect.Detect(ctx, "auto") }

func checkBackend(ctx context.Context) finding {
	r := detectBackend(ctx)
	if r.Usable {
		return finding{"backend", "ok", fmt.Sprintf("%s usable (%s)", r.Backend, r.Reason), ""}
	}
	return finding{"backend", "fail", fmt.Sprintf("no usable sandbox: %s: %s", r.Backend, r.Reason),
		"follow the reason above; 'cordon detect --fresh' checks again"}
}

func checkBinary(exe, dir, home string) finding {
	if why := insideWorkspace(exe, dir, home); why != "" {
		return finding{"binary", "fail", fmt.Sprintf("%s: %s", exe, why),
			"install cordon outside every workspace (e.g. sudo install cordon /usr/local/bin/) and run 'cordon init AGENT' again with it"}
	}
	return finding{"binary", "ok", exe + " is outside the workspace " + dir + " and out of a sandbox's reach", ""}
}

func checkPath(exe string) finding {
	p, err := exec.LookPath("cordon")
	if err != nil {
		return finding{"path", "warn", "no cordon on PATH",
			fmt.Sprintf("put %s on PATH (e.g. a link in /usr/local/bin); the hooks cordon installs name it by absolute path and do not need PATH", filepath.Dir(exe))}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	if real != exe {
		return finding{"path", "warn", fmt.Sprintf("cordon on PATH is %s, not this one (%s)", real, exe),
			"run the cordon you mean to use, or put it first on PATH"}
	}
	return finding{"path", "ok", "cordon on PATH is this binary", ""}
}

func checkHooks(exe, dir, home string) []finding {
	var out []finding
	installed := false
	for _, name := range setup.Agents() {
		a, _ := setup.Lookup(name)
		for _, scope := range []setup.Scope{setup.Project, setup.User} {
			if scope == setup.User && !filepath.IsAbs(home) {
				continue
			}
			path := a.SettingsPath(scope, home, dir, os.Getenv)
			check := "hook " + name
			fix := fmt.Sprintf("cordon init %s%s", name, scopeFlag(scope))
			cmds, err := setup.Commands(a, path)
			if err != nil {
				out = append(out, finding{check, "fail", err.Error(), "fix the file by hand, then " + fix})
				continue
			}
			if len(cmds) == 0 {
				continue
			}
			installed = true
			// Only an entry that gates the agent's tools counts: one under
			// another event, with a narrower matcher or with words added
			// ("; exit 0") runs cordon and decides nothing.
			gates, why, err := setup.Gates(a, path)
			if err != nil {
				out = append(out, finding{check, "fail", err.Error(), "fix the file by hand, then " + fix})
				continue
			}
			if len(gates) == 0 {
				out = append(out, finding{check, "fail", fmt.Sprintf("%s (%s) mentions cordon's hook but gates nothing: %s", path, scope, why),
					"remove that entry, then " + fix})
				continue
			}
			var stale []string
			for _, c := range gates {
				bin, _, _ := setup.CordonHook(c)
				if real, err := filepath.EvalSymlinks(bin); err == nil {
					bin = real
				}
				if bin != exe {
					stale = append(stale, bin)
				}
			}
			if len(stale) > 0 {
				out = append(out, finding{check, "fail",
					fmt.Sprintf("%s (%s): the hook runs %s, not this cordon (%s)", path, scope, stale[0], exe), fix})
				continue
			}
			// Every layer the agent reads: a project's local file, or the
			// user's, switches off the hooks of all the others.
			if why := setup.HooksOff(a, home, dir, os.Getenv); why != "" {
				out = append(out, finding{check, "fail", fmt.Sprintf("%s (%s) runs this cordon, but %s: the agent runs no hook", path, scope, why),
					"remove that setting, then " + fix})
				continue
			}
			if why := setup.Disabled(a, path); why != "" {
				out = append(out, finding{check, "fail", fmt.Sprintf("%s (%s) runs this cordon, but %s: the agent runs no hook", path, scope, why),
					"remove that setting"})
				continue
			}
			if name == "codex" {
				if why, fix := setup.CodexUntrusted(path, setup.CodexConfigs(home, dir, os.Getenv)); why != "" {
					out = append(out, finding{check, "fail", fmt.Sprintf("%s (%s) runs this cordon, but %s: Codex runs no hook it was not told to trust", path, scope, why), fix})
					continue
				}
			}
			out = append(out, finding{check, "ok", fmt.Sprintf("%s (%s) runs this cordon", path, scope), ""})
		}
	}
	if !installed && len(out) == 0 {
		out = append(out, finding{"hooks", "warn", "no agent has cordon's hook, in " + dir + " or under HOME",
			"cordon init AGENT (claude-code, codex, gemini, copilot, cursor); --user for every project"})
	}
	return out
}

func checkGit(ctx context.Context) finding {
	const why = "a sandbox can plant a bare repository in the workspace, and git run there on the host obeys its config"
	git, err := exec.LookPath("git")
	if err != nil {
		return finding{"git", "ok", "git is not installed", ""}
	}
	cmd := exec.CommandContext(ctx, git, "config", "--get", "safe.bareRepository")
	cmd.Dir = "/"
	outb, err := cmd.Output()
	v := strings.TrimSpace(string(outb))
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return finding{"git", "warn", fmt.Sprintf("cannot read safe.bareRepository: %v", err), "git config --global safe.bareRepository explicit"}
	}
	if v == "explicit" {
		return finding{"git", "ok", "safe.bareRepository is explicit", ""}
	}
	if v == "" {
		v = "unset (all)"
	}
	return finding{"git", "warn", fmt.Sprintf("safe.bareRepository is %s: %s", v, why),
		"git config --global safe.bareRepository explicit"}
}

func checkState() finding {
	d := state.Path()
	fi, err := os.Lstat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return finding{"state", "ok", d + " does not exist yet; cordon makes it (0700) on first use", ""}
	case err != nil:
		return finding{"state", "fail", err.Error(), "check " + d}
	case !fi.IsDir():
		return finding{"state", "fail", d + " is not a directory (a symlink or a file)", "remove it; cordon makes the directory on first use"}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return finding{"state", "fail", fmt.Sprintf("%s belongs to uid %d, not you (%d)", d, st.Uid, os.Getuid()),
			"remove it (another user made it first); cordon makes its own on first use"}
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return finding{"state", "fail", fmt.Sprintf("%s has mode %04o; others can reach the audit key and what later launches trust", d, m),
			"chmod 700 " + d}
	}
	return finding{"state", "ok", d + " is yours, mode 0700", ""}
}

func checkAudit() finding {
	log := filepath.Join(state.Path(), state.Audit, hookLogName)
	if _, err := os.Lstat(log); errors.Is(err, fs.ErrNotExist) {
		return finding{"audit", "ok", "no default audit log yet (" + log + ")", ""}
	}
	key, err := audit.ExistingUserKey()
	if err == nil {
		_, err = audit.Verify(log, key)
	}
	if err != nil {
		return finding{"audit", "fail", err.Error(),
			"'cordon audit verify' names the first bad record; keep the log as evidence, then 'cordon audit forget " + log + "' to start a new one"}
	}
	return finding{"audit", "ok", log + " verifies", ""}
}
