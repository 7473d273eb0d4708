package detect

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Real bwrap error texts, as printed by bubblewrap 0.4–0.11.
const (
	errNoPermsNew = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n"
	errNoPermsOld = "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.\n"
	errENOSPC     = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n"
	errUIDMap     = "bwrap: setting up uid map: Permission denied\n"
	errLoopback   = "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n"
	errEPERM      = "bwrap: Creating new namespace failed: Operation not permitted\n"
	errNoUserNS   = "bwrap: Creating new namespace failed, likely because the kernel does not support user namespaces.  bwrap must be installed setuid on such systems.\n"
	errProc       = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"
	errFileCaps   = "bwrap: Unexpected capabilities but not setuid, old file caps config?\n"
	errSetuidUser = "bwrap: Unexpected setuid user 1000, should be 0\n"
	errUnknownOpt = "bwrap: Unknown option --cap-drop\n"
	errSlave      = "bwrap: Failed to make / slave: Invalid argument\n"
	errExecvp     = "bwrap: execvp /usr/bin/bwrap: No such file or directory\n"
)

func TestClassifyBwrap(t *testing.T) {
	const bw = "/usr/bin/bwrap"
	// failed is a host where the sysctls allow user namespaces.
	failed := func(stderr string) bwrapFacts {
		return bwrapFacts{Path: bw, Version: "0.9.0", ExitCode: 1, Stderr: stderr, UID: 1000,
			UsernsClone: "1", MaxUserNS: "63000", AppArmorRestrict: ""}
	}
	with := func(f bwrapFacts, edit func(*bwrapFacts)) bwrapFacts { edit(&f); return f }

	tests := []struct {
		name   string
		facts  bwrapFacts
		usable bool
		want   []string // substrings of the reason, in order of appearance
	}{
		{"ok", bwrapFacts{Path: bw, Version: "0.8.0"}, true,
			[]string{"ok: bwrap 0.8.0 at /usr/bin/bwrap"}},
		{"missing", bwrapFacts{Looked: trustedBwrap}, false,
			[]string{"not installed", "/usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap", "apt-get install bubblewrap", "dnf install bubblewrap"}},
		{"rejected candidates", bwrapFacts{Looked: []string{"/usr/bin/bwrap (rejected: /usr/bin/bwrap is group- or world-writable (mode -rwxrwxrwx))"}}, false,
			[]string{"no trustworthy bwrap found", "world-writable", "apt-get install bubblewrap"}},
		{"override rejected", bwrapFacts{OverrideErr: `CORDON_BWRAP="bwrap" is not acceptable: not an absolute path`}, false,
			[]string{"not an absolute path", "fix: point CORDON_BWRAP"}},
		{"exec error", bwrapFacts{Path: bw, ExecErr: "fork/exec /usr/bin/bwrap: permission denied"}, false,
			[]string{"cannot execute /usr/bin/bwrap", "permission denied", "reinstall"}},
		{"timeout", bwrapFacts{Path: bw, TimedOut: true}, false,
			[]string{"did not finish within 15s", "cordon detect --fresh"}},
		{"userns_clone=0, new text", with(failed(errNoPermsNew), func(f *bwrapFacts) { f.UsernsClone = "0" }), false,
			[]string{"kernel.unprivileged_userns_clone = 0", "No permissions", "sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"userns_clone=0, old text", with(failed(errNoPermsOld), func(f *bwrapFacts) { f.UsernsClone = "0" }), false,
			[]string{"kernel.unprivileged_userns_clone = 0", "sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"userns_clone=0, setuid bwrap under no_new_privs", with(failed(errNoPermsNew), func(f *bwrapFacts) { f.UsernsClone = "0"; f.Setuid = true }), false,
			[]string{"kernel.unprivileged_userns_clone = 0", "is setuid root", "no_new_privs", "sysctl -w"}},
		{"max_user_namespaces=0", with(failed(errENOSPC), func(f *bwrapFacts) { f.MaxUserNS = "0" }), false,
			[]string{"user.max_user_namespaces = 0", "sysctl -w user.max_user_namespaces=15000"}},
		{"nesting depth", failed(errENOSPC), false,
			[]string{"nesting depth", "(63000)", "--disable-userns", "less deeply nested"}},
		{"ubuntu apparmor, uid map", with(failed(errUIDMap), func(f *bwrapFacts) { f.AppArmorRestrict = "1" }), false,
			[]string{"apparmor_restrict_unprivileged_userns = 1", "setting up uid map", "profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }", "apparmor_parser -r", "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"}},
		{"ubuntu apparmor, loopback", with(failed(errLoopback), func(f *bwrapFacts) { f.AppArmorRestrict = "1" }), false,
			[]string{"AppArmor restriction", "RTM_NEWADDR", "/etc/apparmor.d/bwrap"}},
		{"apparmor sysctl present but off", with(failed(errUIDMap), func(f *bwrapFacts) { f.AppArmorRestrict = "0" }), false,
			[]string{"a security policy", "fix: run cordon outside that sandbox"}},
		{"docker seccomp", with(failed(errNoPermsNew), func(f *bwrapFacts) { f.InContainer = true }), false,
			[]string{"inside this container", "seccomp=unconfined", "--backend none"}},
		{"outer sandbox", failed(errEPERM), false,
			[]string{"although the sysctls allow it", "Operation not permitted", "allow user namespaces for /usr/bin/bwrap"}},
		{"no CONFIG_USER_NS", with(failed(errNoUserNS), func(f *bwrapFacts) { f.UsernsClone, f.MaxUserNS = "", "" }), false,
			[]string{"does not support them", "CONFIG_USER_NS=y"}},
		{"masked /proc in container", with(failed(errProc), func(f *bwrapFacts) { f.InContainer = true }), false,
			[]string{"fresh /proc", "systempaths=unconfined"}},
		{"masked /proc elsewhere", failed(errProc), false,
			[]string{"fresh /proc", "outside the outer sandbox"}},
		{"file caps without setuid", failed(errFileCaps), false,
			[]string{"file capabilities", "setcap -r /usr/bin/bwrap"}},
		{"setuid to non-root", failed(errSetuidUser), false,
			[]string{"setuid to a user other than root", "chown root /usr/bin/bwrap"}},
		{"too old", failed(errUnknownOpt), false,
			[]string{"too old", "--cap-drop", "upgrade bubblewrap"}},
		{"payload missing", failed(errExecvp), false,
			[]string{"could not run the probe command"}},
		{"unrecognised", failed(errSlave), false,
			[]string{"exit status 1", "make / slave", "fix: run `/usr/bin/bwrap --unshare-user"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			usable, reason := classifyBwrap(tc.facts)
			require.Equal(t, tc.usable, usable, reason)
			rest := reason
			for _, w := range tc.want {
				require.Contains(t, rest, w, "reason: %s", reason)
				rest = rest[strings.Index(rest, w)+len(w):]
			}
			if !usable {
				require.Contains(t, reason, "fix:", "every unusable verdict names its fix")
			}
		})
	}
}

func TestClassifySeatbelt(t *testing.T) {
	tests := []struct {
		name   string
		facts  seatbeltFacts
		usable bool
		want   string
	}{
		{"linux", seatbeltFacts{GOOS: "linux"}, false, "seatbelt (sandbox-exec) exists only on macOS"},
		{"ok", seatbeltFacts{GOOS: "darwin", Version: "14.5"}, true, "ok: /usr/bin/sandbox-exec compiled and applied cordon's profile on macOS 14.5"},
		{"missing", seatbeltFacts{GOOS: "darwin", Missing: true}, false, "/usr/bin/sandbox-exec is missing"},
		{"nested", seatbeltFacts{GOOS: "darwin", ExitCode: 71, Stderr: "sandbox-exec: sandbox_apply: Operation not permitted\n"}, false, "already inside a Seatbelt sandbox"},
		{"timeout", seatbeltFacts{GOOS: "darwin", TimedOut: true}, false, "did not finish within 15s"},
		{"does not compile", seatbeltFacts{GOOS: "darwin", Version: "13.6", ExitCode: 65, Stderr: "sandbox-exec: unbound variable: TIOCSTI\n"}, false,
			`sandbox-exec on macOS 13.6 does not compile cordon's profile (said: "sandbox-exec: unbound variable: TIOCSTI")`},
		{"render", seatbeltFacts{GOOS: "darwin", RenderErr: "boom"}, false, "cordon bug"},
		{"other", seatbeltFacts{GOOS: "darwin", ExitCode: 71, Stderr: "sandbox-exec: something else\n"}, false, "exit status 71"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			usable, reason := classifySeatbelt(tc.facts)
			require.Equal(t, tc.usable, usable, reason)
			require.Contains(t, reason, tc.want)
		})
	}
}
