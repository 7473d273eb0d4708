package detect

import (
	"fmt"
	"strings"
)

// bwrapFacts is everything the bwrap classifier looks at: what the probe
// printed and how it ended, plus host facts read from /proc. Keeping it
// plain data makes classifyBwrap a pure function, tested over real
// bwrap error texts without needing a broken host.
type bwrapFacts struct {
	Path        string   // resolved bwrap binary; "" when none was found
	Looked      []string // where we looked when Path is ""
	OverrideErr string   // CORDON_BWRAP was set but is not acceptable
	Version     string

	ExecErr  string // bwrap could not be started at all
	TimedOut bool
	ExitCode int
	Stderr   string

	Setuid      bool
	UID         int
	InContainer bool
	// Sysctl contents, trimmed; "" when the file does not exist on this kernel.
	UsernsClone      string // /proc/sys/kernel/unprivileged_userns_clone (Debian/Ubuntu patch)
	MaxUserNS        string // /proc/sys/user/max_user_namespaces
	AppArmorRestrict string // /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu ≥ 23.10)
}

// appArmorProfile is what Ubuntu itself ships for programs that need
// unprivileged user namespaces; quoted in the fix so it can be pasted.
const appArmorProfile = `abi <abi/4.0>, include <tunables/global> profile bwrap %s flags=(unconfined) { userns, }`

// classifyBwrap turns a probe's outcome into (usable, reason). The reason
// says what was wanted, what the host has, and the fix.
func classifyBwrap(f bwrapFacts) (bool, string) {
	if why := notProbed(f); why != "" {
		return false, why
	}
	if f.ExitCode == 0 {
		v := f.Version
		if v == "" {
			v = "(unknown version)"
		}
		return true, fmt.Sprintf("ok: bwrap %s at %s created user, pid, ipc and net namespaces with all capabilities dropped and a fresh /proc", v, f.Path)
	}
	// In this order: bwrap's stderr can match more than one (a /proc it
	// may not mount says "Operation not permitted" too).
	for _, explain := range []func(bwrapFacts) string{installProblem, usernsUnavailable, setupRefused} {
		if why := explain(f); why != "" {
			return false, why
		}
	}
	return false, fmt.Sprintf("bwrap probe failed with exit status %d%s; fix: run `%s` to see the full error", f.ExitCode, said(f.Stderr), strings.Join(append([]string{f.Path}, probeArgs(f.Path)...), " "))
}

// notProbed says why there is no probe to judge: no trustworthy bwrap,
// one that does not execute, or a probe that did not finish.
func notProbed(f bwrapFacts) string {
	if f.OverrideErr != "" {
		return f.OverrideErr + "; fix: point CORDON_BWRAP at a root-owned bwrap (absolute path, not group/world-writable) or unset it"
	}
	if f.Path == "" {
		looked := strings.Join(f.Looked, ", ")
		what := "bubblewrap is not installed"
		if strings.Contains(looked, "(rejected:") {
			what = "no trustworthy bwrap found"
		}
		return fmt.Sprintf("%s (looked in %s; PATH is never searched); fix: apt-get install bubblewrap, or dnf install bubblewrap, or set CORDON_BWRAP=/abs/path/to/bwrap",
			what, looked)
	}
	if f.ExecErr != "" {
		return fmt.Sprintf("cannot execute %s: %s; fix: reinstall bubblewrap (apt-get install --reinstall bubblewrap / dnf reinstall bubblewrap)", f.Path, f.ExecErr)
	}
	if f.TimedOut {
		return fmt.Sprintf("bwrap probe did not finish within %s%s; fix: check the host is not overloaded or stuck on a hung mount, then retry with `cordon detect --fresh`",
			probeTimeout, said(f.Stderr))
	}
	return ""
}

// stderrHas reports whether the probe's stderr contains any of subs.
func (f bwrapFacts) stderrHas(subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(f.Stderr, sub) {
			return true
		}
	}
	return false
}

// nsDenied reports whether bwrap said it was refused a namespace or its
// setup.
func (f bwrapFacts) nsDenied() bool {
	return f.stderrHas("No permissions to creat", "Creating new namespace failed", "setting up uid map", "RTM_NEWADDR",
		"Operation not permitted", "Permission denied")
}

func (f bwrapFacts) setuidNote() string {
	if !f.Setuid {
		return ""
	}
	return fmt.Sprintf(" (%s is setuid root, but the setuid bit does not help under no_new_privs, e.g. inside containers or other sandboxes)", f.Path)
}

// installProblem is a bwrap too old or installed with the wrong bits.
func installProblem(f bwrapFacts) string {
	s := f.Stderr
	switch {
	case f.stderrHas("Unknown option"):
		return fmt.Sprintf("bwrap %s at %s is too old for the options cordon uses%s; fix: upgrade bubblewrap to a current release", f.Version, f.Path, said(s))
	case f.stderrHas("Unexpected capabilities but not setuid"):
		return fmt.Sprintf("%s has file capabilities but is not setuid, a configuration bwrap refuses%s; fix: sudo setcap -r %s (or reinstall bubblewrap)", f.Path, said(s), f.Path)
	case f.stderrHas("Unexpected setuid user"):
		return fmt.Sprintf("%s is setuid to a user other than root%s; fix: sudo chown root %s, or sudo chmod u-s %s to use user namespaces instead", f.Path, said(s), f.Path, f.Path)
	}
	return ""
}

// usernsUnavailable is a host whose kernel or settings give no
// unprivileged user namespace.
func usernsUnavailable(f bwrapFacts) string {
	s, nsDenied := f.Stderr, f.nsDenied()
	switch {
	case f.UsernsClone == "0" && nsDenied:
		return "bwrap needs unprivileged user namespaces, but kernel.unprivileged_userns_clone = 0" + f.setuidNote() + said(s) +
			"; fix: sudo sysctl -w kernel.unprivileged_userns_clone=1 (persist it in /etc/sysctl.d/90-cordon.conf)"
	case f.MaxUserNS == "0":
		return "bwrap needs to create a user namespace, but user.max_user_namespaces = 0" + said(s) +
			"; fix: sudo sysctl -w user.max_user_namespaces=15000 (persist it in /etc/sysctl.d/90-cordon.conf)"
	case f.stderrHas("ENOSPC", "No space left on device"):
		return fmt.Sprintf("the kernel refused another user namespace: nesting depth or user.max_user_namespaces (%s) exhausted, or an outer sandbox forbids new ones (bwrap --disable-userns)%s; fix: run cordon outside that sandbox or from a less deeply nested container, or raise user.max_user_namespaces", f.MaxUserNS, said(s))
	case f.AppArmorRestrict == "1" && nsDenied:
		return "bwrap needs an unprivileged user namespace with capabilities inside it, but Ubuntu's AppArmor restriction is on (kernel.apparmor_restrict_unprivileged_userns = 1)" + said(s) +
			"; fix: allow bwrap with an AppArmor profile: write '" + fmt.Sprintf(appArmorProfile, f.Path) +
			"' to /etc/apparmor.d/bwrap and run sudo apparmor_parser -r /etc/apparmor.d/bwrap (or, host-wide: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)"
	case f.stderrHas("kernel does not support user namespaces"):
		return "bwrap needs user namespaces, but this kernel does not support them (CONFIG_USER_NS)" + said(s) +
			"; fix: use a kernel built with CONFIG_USER_NS=y"
	}
	return ""
}

// setupRefused is a sandbox setup that something around this process
// (a container, an outer sandbox, a security policy) refused.
func setupRefused(f bwrapFacts) string {
	s, nsDenied := f.Stderr, f.nsDenied()
	switch {
	case f.stderrHas("Can't mount proc"):
		fix := "run cordon where a fresh procfs may be mounted (outside the outer sandbox)"
		if f.InContainer {
			fix = "start the container with the host's procfs fully visible (docker/podman: --security-opt systempaths=unconfined / --security-opt unmask=ALL)"
		}
		return "bwrap created the namespaces but could not mount a fresh /proc: the current /proc has masked entries (typical in containers)" + said(s) + "; fix: " + fix
	case nsDenied && f.InContainer:
		return "bwrap cannot create a user namespace inside this container: its seccomp/LSM profile blocks unshare(CLONE_NEWUSER)" + f.setuidNote() + said(s) +
			"; fix: start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (or a seccomp profile allowing user namespaces), or run cordon on the host; only if the container itself is your boundary, pass --backend none"
	case nsDenied:
		return "bwrap cannot create a user namespace although the sysctls allow it: a security policy (seccomp, SELinux/AppArmor, or an outer sandbox such as Flatpak or another agent's bwrap) blocks it" + f.setuidNote() + said(s) +
			"; fix: run cordon outside that sandbox, or allow user namespaces for " + f.Path + " in that policy"
	case f.stderrHas("execvp"):
		return "bwrap set up the sandbox but could not run the probe command inside it" + said(s) + "; fix: check that " + f.Path + " is readable inside a read-only bind of /"
	}
	return ""
}

// said quotes the first meaningful line of a tool's stderr as evidence.
func said(stderr string) string {
	line := firstLine(stderr)
	if line == "" {
		return ""
	}
	return fmt.Sprintf(" (said: %q)", line)
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 240 {
				l = l[:240] + "…"
			}
			return l
		}
	}
	return ""
}

// seatbeltFacts is the seatbelt counterpart of bwrapFacts.
type seatbeltFacts struct {
	GOOS      string
	Missing   bool
	RenderErr string // the probe's profile did not render (a cordon bug)
	ExecErr   string
	TimedOut  bool
	ExitCode  int
	Stderr    string
	Version   string
}

func classifySeatbelt(f seatbeltFacts) (bool, string) {
	switch {
	case f.GOOS != "darwin":
		return false, "seatbelt (sandbox-exec) exists only on macOS"
	case f.Missing:
		return false, sandboxExec + " is missing, although it ships with every macOS; fix: restore it (it is part of the OS), e.g. by reinstalling macOS"
	case f.RenderErr != "":
		return false, "cordon could not render its own probe profile: " + f.RenderErr + "; fix: report this as a cordon bug"
	case f.ExecErr != "":
		return false, fmt.Sprintf("cannot execute %s: %s; fix: check it is the system binary and executable", sandboxExec, f.ExecErr)
	case f.TimedOut:
		return false, fmt.Sprintf("sandbox-exec probe did not finish within %s; fix: retry with `cordon detect --fresh`", probeTimeout)
	case f.ExitCode == 0:
		return true, fmt.Sprintf("ok: %s compiled and applied cordon's profile on macOS %s", sandboxExec, f.Version)
	case strings.Contains(f.Stderr, "sandbox_apply") && strings.Contains(f.Stderr, "Operation not permitted"):
		return false, "sandbox-exec cannot apply a profile: this process is already inside a Seatbelt sandbox (another agent's or an app's)" + said(f.Stderr) +
			"; fix: run cordon outside that sandbox"
	case f.ExitCode == exDataErr:
		// sandbox-exec's EX_DATAERR: the profile did not compile here.
		return false, fmt.Sprintf("sandbox-exec on macOS %s does not compile cordon's profile%s, so every sandboxed command would fail; the Seatbelt backend is unusable on this release; fix: report it to cordon with that message and `sw_vers` (`cordon profile --backend seatbelt` shows the profile)",
			orUnknown(f.Version), said(f.Stderr))
	}
	return false, fmt.Sprintf("sandbox-exec probe failed with exit status %d%s; fix: run `cordon detect --fresh` again, and see `cordon profile --backend seatbelt` for the profile it applies",
		f.ExitCode, said(f.Stderr))
}

// exDataErr is sysexits' EX_DATAERR, sandbox-exec's status for a profile
// it cannot compile.
const exDataErr = 65

func orUnknown(v string) string {
	if v == "" {
		return "(unknown version)"
	}
	return v
}
