//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/native"
)

// buildNativeFloor builds nativefloor/, the minimal Go launcher of the
// native sandbox (en).
func buildNativeFloor(out string) error {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return fmt.Errorf("find module root (run from the repository): %w", err)
	}
	if err := goBuild(strings.TrimSpace(string(root)), out, "./bench/launch/nativefloor"); err != nil {
		return fmt.Errorf("build the native floor: %w", err)
	}
	return nil
}

// prepareNativeFloor writes (en)'s spec: the mounts 'cordon profile
// --backend native' lists for ws, the same filter, /bin/true, in the
// workspace. It leaves out what the launcher adds around them (the
// roots' identity checks), which costs a stat each.
func (lb *launchBench) prepareNativeFloor(tmp string) error {
	prof, err := profile(lb.cordon, lb.env, lb.ws, "--backend", "native", "--workspace", lb.ws, "--", "/bin/true")
	if err != nil {
		return err
	}
	f := struct {
		Spec   native.Spec
		Mounts []native.Mount
	}{Spec: native.Spec{
		ProcReadonly: bwrap.ProcReadonly, ProcMasked: bwrap.ProcMasked,
		DisableUserns: true, Seccomp: bwrap.Seccomp(bwrap.SocketsFor(false)),
		Chdir: lb.ws, Path: "/bin/true", Argv: []string{"/bin/true"},
	}}
	for _, m := range prof.Mounts {
		kind, rest, _ := strings.Cut(m, " ")
		nm := native.Mount{Path: rest, What: kind}
		switch kind {
		case "bind", "pin":
		case "ro-bind":
			nm.What, nm.Readonly = "read-only bind", true
		case "mask":
			i := strings.LastIndexByte(rest, ' ')
			nm.Path, nm.Src, nm.Readonly = rest[:i], rest[i+1:], true
		default:
			return fmt.Errorf("cordon profile: mount %q", m)
		}
		f.Mounts = append(f.Mounts, nm)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	spec := filepath.Join(tmp, "nativefloor.json")
	if err := os.WriteFile(spec, b, 0o600); err != nil {
		return err
	}
	lb.floorArgs = []string{lb.nativeFloor, spec}
	if _, err := sample(exec.Command(lb.nativeFloor, spec), lb.env, lb.ws); err != nil {
		return err
	}
	fmt.Printf("native floor: %d mounts, as cordon's native launch makes them\n", len(f.Mounts))
	return nil
}

// prepareLandlock takes (ak) when this cordon launches through
// --backend landlock.
func (lb *launchBench) prepareLandlock() {
	args := []string{"run", "--backend", "landlock", "--workspace", lb.ws, "--", "/bin/true"}
	if _, err := sample(exec.Command(lb.cordon, args...), lb.env, lb.ws); err == nil {
		lb.landlockArgs = args
	}
}

// codexArgs run /bin/true in Codex's sandbox with the workspace writable,
// its closest equivalent of cordon's workspace preset.
var codexArgs = []string{"sandbox", "-c", `sandbox_mode="workspace-write"`, "--", "/bin/true"}

// prepareCodex finds Codex's CLI (-codex, $CODEX, the e2e suite's cached
// install, PATH) and checks that its sandbox runs here.
func (lb *launchBench) prepareCodex() {
	if lb.cfg.codexN <= 0 {
		return
	}
	home, _ := os.UserHomeDir()
	cands := []string{lb.cfg.codex, os.Getenv("CODEX"),
		filepath.Join(home, ".cache/cordon-e2e/agents/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")}
	if p, err := exec.LookPath("codex"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := sample(exec.Command(p, codexArgs...), lb.env, lb.ws); err != nil {
			fmt.Printf("codex: %s: its sandbox does not run here: %v\n", p, err)
			return
		}
		v, _ := exec.Command(p, "--version").Output()
		fmt.Printf("codex: %s (%s)\n", strings.TrimSpace(string(v)), p)
		lb.codex = p
		return
	}
}
