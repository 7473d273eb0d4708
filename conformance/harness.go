package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// H is a case's harness: its fixture, its user, its executor, and the
// host-side judgement helpers.
type H struct {
	ctx  context.Context
	x    Executor
	User User
	// Dir is the fixture root (symlink-free); every path a case touches on
	// the host lies below it.
	Dir string
	// Home is the HOME of the case's commands (Dir/home).
	Home string
	// Secret is a string written into denied files; it must never come out.
	Secret string
	// LaunchTimeout bounds each Launch; 0 means 30 seconds. A case whose
	// launches do much work (fill a workspace) sets more, so that a loaded
	// machine does not fail it.
	LaunchTimeout time.Duration
	// Cache is XDG_CACHE_HOME for cordon itself, shared by one user's cases.
	Cache string

	keep     map[string]bool
	failures []string
	cleanups []func()
}

// stop is panicked by Fatalf and NotApplicable (with the reason) and
// recovered by the runner.
type stop struct{ notApplicable string }

func newSecret() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "cordon-secret-" + hex.EncodeToString(b)
}

// Errorf records a failure and goes on.
func (h *H) Errorf(format string, a ...any) {
	h.failures = append(h.failures, fmt.Sprintf(format, a...))
}

// Fatalf records a failure and ends the case.
func (h *H) Fatalf(format string, a ...any) {
	h.Errorf(format, a...)
	panic(stop{})
}

// NotApplicable ends the case as not applicable on this host.
func (h *H) NotApplicable(format string, a ...any) {
	panic(stop{notApplicable: fmt.Sprintf(format, a...)})
}

// Cleanup registers f to run when the case ends.
func (h *H) Cleanup(f func()) { h.cleanups = append(h.cleanups, f) }

// Backend is the backend the case runs under.
func (h *H) Backend() string { return h.x.Backend() }

// InProcess reports whether launches go through the launcher in this
// process, where a Launch's At reaches the launcher's moments.
func (h *H) InProcess() bool {
	_, ok := h.x.(*Launcher)
	return ok
}

// Attack is the path of the cordon binary that runs 'cordon __attack'.
func (h *H) Attack() string { return h.x.Helper() }

// Path joins rel onto the fixture root; an absolute rel is returned as is.
func (h *H) Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(h.Dir, rel)
}

// Write creates rel (and its parents) with content, mode 0644.
func (h *H) Write(rel, content string) string {
	return h.WriteMode(rel, content, 0o644)
}

// WriteMode creates rel with content and mode.
func (h *H) WriteMode(rel, content string, mode fs.FileMode) string {
	p := h.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	if err := os.Chmod(p, mode); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return p
}

// Mkdir creates directory rel and its parents.
func (h *H) Mkdir(rel string) string {
	p := h.Path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return p
}

// Symlink creates a symlink rel pointing at target.
func (h *H) Symlink(target, rel string) string {
	p := h.Path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	if err := os.Symlink(target, p); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return p
}

// KeepOwner leaves rel owned by whoever made it (root) when the fixture is
// handed to an unprivileged user.
func (h *H) KeepOwner(rel string) { h.keep[h.Path(rel)] = true }

// Host runs a command on the host (not sandboxed) as the harness, to
// build a fixture; it fails the case on error.
func (h *H) Host(dir string, argv ...string) string {
	cmd := exec.CommandContext(h.ctx, argv[0], argv[1:]...)
	cmd.Dir = h.Path(dir)
	cmd.Env = h.env(nil)
	ownGroup(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.Fatalf("fixture: %v: %v: %s", argv, err, out)
	}
	return string(out)
}

// Have reports whether program is on PATH.
func (h *H) Have(program string) bool {
	_, err := lookPath(program)
	return err == nil
}

// Read returns the host content of rel and whether it exists.
func (h *H) Read(rel string) (string, bool) {
	b, err := os.ReadFile(h.Path(rel))
	return string(b), err == nil
}

// Exists reports whether rel exists on the host (without following a
// final symlink).
func (h *H) Exists(rel string) bool {
	_, err := os.Lstat(h.Path(rel))
	return err == nil
}

// Want fails unless rel holds exactly content on the host.
func (h *H) Want(rel, content string) {
	got, ok := h.Read(rel)
	switch {
	case !ok:
		h.Errorf("host: %s is gone", h.Path(rel))
	case got != content:
		h.Errorf("host: %s changed: %q, want %q", h.Path(rel), clip(got), clip(content))
	}
}

// Absent fails if rel exists on the host.
func (h *H) Absent(rel string) {
	if h.Exists(rel) {
		h.Errorf("host: %s exists and should not", h.Path(rel))
	}
}

// NoSecret fails if the case's secret came out of the sandbox.
func (h *H) NoSecret(o Output) {
	if strings.Contains(o.Stdout, h.Secret) || strings.Contains(o.Stderr, h.Secret) {
		h.Errorf("the secret came out of the sandbox:\n%s", o)
	}
}

// SecretOnlyIn fails if a host file under the fixture other than those
// listed holds the secret (a copy made from inside).
func (h *H) SecretOnlyIn(rels ...string) {
	allowed := map[string]bool{}
	for _, r := range rels {
		allowed[h.Path(r)] = true
	}
	filepath.WalkDir(h.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || allowed[p] {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), h.Secret) {
			h.Errorf("host: %s holds a copy of the secret", p)
		}
		return nil
	})
}

// Marked reports whether the sandboxed script printed @@m@@.
func Marked(o Output, m string) bool { return strings.Contains(o.Stdout, "@@"+m+"@@") }

// Refuse fails for every marker in ms the script printed: each marks an
// attempt that succeeded and must not have.
func (h *H) Refuse(o Output, ms ...string) {
	for _, m := range ms {
		if Marked(o, m) {
			h.Errorf("attempt %q succeeded inside the sandbox:\n%s", m, o)
		}
	}
}

// Expect fails for every marker in ms the script did not print: each marks
// ordinary work that must succeed.
func (h *H) Expect(o Output, ms ...string) {
	for _, m := range ms {
		if !Marked(o, m) {
			h.Errorf("%q did not succeed inside the sandbox:\n%s", m, o)
		}
	}
}

// The markers are printed from pieces, so that a script that dumps its own
// command line (/proc/*/cmdline) does not print them by accident.
const prologue = `if [ -z "$CORDON_SANDBOX" ]; then echo "@@NO""SANDBOX@@"; fi
ok() { echo "@@$1@@"; }
`

// Sandbox runs script with sh -c inside the sandbox under p, in the
// workspace (or the fixture root), with env added to the environment. It
// fails the case if the script did not run to its end inside a sandbox.
func (h *H) Sandbox(p Policy, script string, env ...string) Output {
	return h.Launch(h.Script(p, script, env...))
}

// Script is the launch Sandbox makes, for a case to adjust before Launch.
func (h *H) Script(p Policy, script string, env ...string) Launch {
	dir := p.Workspace
	if dir == "" {
		dir = h.Dir
	}
	return Launch{Policy: p, Dir: dir, Env: env,
		Argv: []string{"/bin/sh", "-c", prologue + script + "\necho \"@@DO\"\"NE@@\"\n"}}
}

// Launch runs l (Env is added to the case's environment) and checks that
// its script, if it is one of ours, ran to the end inside a sandbox.
func (h *H) Launch(l Launch) Output {
	h.handOver()
	h.forgetState(l.Policy)
	l.Env = h.env(l.Env)
	if l.NoHome {
		l.Env = slices.DeleteFunc(l.Env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") })
	}
	limit := h.LaunchTimeout
	if limit == 0 {
		limit = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(h.ctx, limit)
	defer cancel()
	o, err := h.x.Exec(ctx, h.User, l)
	if err != nil {
		h.Fatalf("launch: %v\n%s", err, o)
	}
	if h.ctx.Err() != nil {
		h.Fatalf("launch: %v\n%s", context.Cause(h.ctx), o) // the run was interrupted
	}
	if ctx.Err() != nil {
		h.Fatalf("launch: timed out\n%s", o)
	}
	if Marked(o, "NOATTACK") {
		h.Fatalf("the attack helper cannot make an attack this case needs:\n%s", o)
	}
	if l.Refusable != "" && o.Code == 125 {
		if !strings.Contains(o.Stderr, l.Refusable) {
			h.Fatalf("cordon refused the launch, but not with %q:\n%s", l.Refusable, o)
		}
		return o
	}
	if len(l.Argv) == 3 && strings.HasPrefix(l.Argv[2], prologue) {
		if Marked(o, "NOSANDBOX") {
			h.Fatalf("the script ran outside any sandbox (CORDON_SANDBOX unset):\n%s", o)
		}
		if !Marked(o, "DONE") {
			h.Fatalf("the script did not run to its end inside the sandbox:\n%s", o)
		}
	}
	return o
}

// Background starts l like Launch, without waiting and without Launch's
// checks, for an attacker that runs while the case launches its victims.
// The returned function waits for it to end and returns what it printed.
func (h *H) Background(l Launch) func() Output {
	h.handOver()
	h.forgetState(l.Policy)
	l.Env = h.env(l.Env)
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Minute)
	done := make(chan Output, 1)
	go func() {
		o, err := h.x.Exec(ctx, h.User, l)
		if err != nil {
			o.Stderr += "\nlaunch: " + err.Error()
		}
		done <- o
	}()
	var o *Output
	wait := func() Output {
		if o == nil {
			v := <-done
			o = &v
		}
		return *o
	}
	h.Cleanup(func() { cancel(); wait() })
	return wait
}

// forgetState removes, when the case ends, what the launches of p leave
// for the case's user in cordon's state directory outside the fixture: the
// workspace preset's private TMPDIR, and the records of the scan for
// nested repositories of each writable root (one of 6 MB after
// cross-launch-scan-bound). A 'cordon verify' leaves the user's state
// directory as it found it, but for masks (shared, named by content).
func (h *H) forgetState(p Policy) {
	st := state.PathFor(h.User.Uid)
	var files []string
	for _, root := range append([]string{p.Workspace}, p.Writable...) {
		r, err := policy.Resolve(root)
		if root == "" || err != nil {
			continue
		}
		files = append(files, workspace.RecordFiles(filepath.Join(st, state.Scan), r)...)
		if root == p.Workspace {
			n := filepath.Base(workspace.PrivateTmpDir(r))
			files = append(files, filepath.Join(st, state.Tmp, n), filepath.Join(st, state.Tmp, "."+n+".lock"))
			files = append(files, filepath.Join(st, state.Cache, n), filepath.Join(st, state.Cache, "."+n+".lock"))
		}
	}
	h.Cleanup(func() {
		for _, f := range files {
			removeAll(f)
		}
	})
}

// env is the environment of sandboxed and host commands of the case.
func (h *H) env(extra []string) []string {
	e := []string{
		"PATH=" + sandboxPath,
		"HOME=" + h.Home, "LANG=C", "LC_ALL=C", "TERM=dumb",
		"XDG_CACHE_HOME=" + h.Cache,
		"CORDON_STATE_DIR=" + h.stateOverride(),
		"ATTACK=" + h.Attack(), "FIX=" + h.Dir,
		"GIT_CONFIG_NOSYSTEM=1", // the harness (root) runs git in fixtures the user owns:
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
		"GIT_AUTHOR_NAME=cordon", "GIT_AUTHOR_EMAIL=cordon@example.invalid",
		"GIT_COMMITTER_NAME=cordon", "GIT_COMMITTER_EMAIL=cordon@example.invalid",
	}
	if v := os.Getenv("CORDON_BWRAP"); v != "" {
		e = append(e, "CORDON_BWRAP="+v)
	}
	return append(e, extra...)
}

// handOver chowns the fixture to the case's user (but KeepOwner paths).
func (h *H) handOver() {
	if h.User.Invoker {
		return
	}
	filepath.WalkDir(h.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !h.keep[p] {
			os.Lchown(p, h.User.Uid, h.User.Gid)
		}
		return nil
	})
}

// stateOverride is the CORDON_STATE_DIR the case's commands get: the
// suite's own when the case runs as the invoker (a mutant's private state
// directory), else none, so cordon finds the user's usual one. Either way
// it is state.PathFor(h.User.Uid) as seen from this process.
func (h *H) stateOverride() string {
	if h.User.Invoker {
		return os.Getenv(state.EnvDir)
	}
	return ""
}

// rename renames rel to newRel on the host; a failure is the case's (and
// does not stop it: a launcher's test hook calls it).
func (h *H) rename(rel, newRel string) {
	if err := os.Rename(h.Path(rel), h.Path(newRel)); err != nil {
		h.Errorf("fixture: %v", err)
	}
}

// remove removes rel (a file, a link or an empty directory) on the host,
// as rename reports failure.
func (h *H) remove(rel string) {
	if err := os.Remove(h.Path(rel)); err != nil {
		h.Errorf("fixture: %v", err)
	}
}
