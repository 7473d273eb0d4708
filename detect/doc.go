// Package detect finds out whether a sandbox backend really works on this
// host, says why not and how to fix it, and remembers the answer so a
// launch does not pay for a probe.
//
// # Probing
//
// A probe runs the backend with the features the launcher uses. For bwrap:
//
//	bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-net \
//	      --cap-drop ALL --new-session --die-with-parent \
//	      --ro-bind / / --proc /proc --dev /dev -- bwrap --version
//
// with a 5 s timeout. The bwrap binary comes from a fixed list
// (/usr/bin/bwrap, /usr/local/bin/bwrap, /bin/bwrap) or from
// CORDON_BWRAP, an absolute path owned by root or the current user and not
// group/world-writable — never from PATH. For seatbelt (macOS only):
// /usr/bin/sandbox-exec -p PROFILE -D NAME=value … /usr/bin/true, where
// PROFILE is seatbelt.ProbeProfile: the fixed part of the real profile with
// a representative path in every kind of rule, so that a construct this
// macOS does not compile makes the backend unusable, with sandbox-exec's
// message, instead of making every command fail.
//
// A failed probe is classified from bwrap's stderr and host facts (the
// user-namespace sysctls, Ubuntu's AppArmor restriction, setuid bits,
// containers) into a Reason that ends with the fix.
//
// # Caching
//
// [Detect] answers from memory, then from
// detect-<backend>.json in cordon's state directory (internal/state,
// denied inside every sandbox), never recording a nested verdict,
// and probes only when neither matches. The file's key holds the backend
// binary's path, size, mtime, ctime and inode, the kernel release and boot
// id, the user-namespace sysctls (Linux) or a digest of the probe's
// profile (macOS), and the uid; any change re-probes. Only
// usable verdicts are written, atomically and 0600. [Probe] always probes
// and touches no cache (cordon detect --fresh).
//
// With CORDON_PROBE_LOG=FILE every real probe appends one line to FILE,
// which is how the launch benchmark proves that a warm launch probes
// nothing.
//
// # Nesting
//
// Inside a cordon sandbox the launcher sets CORDON_SANDBOX=<backend>.
// When it is set, Detect and Probe report Nested and Usable without
// probing, and the launcher does not wrap a second time.
package detect
