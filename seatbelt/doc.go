// Package seatbelt renders a canonical cordon policy as a macOS Seatbelt
// profile (SBPL) for /usr/bin/sandbox-exec. It is a pure renderer: it runs
// nothing, reads nothing from the host, and builds and tests on any OS.
//
//	c, err := policy.Canonicalize(p)
//	prof, err := seatbelt.Render(c, seatbelt.Options{Network: false})
//	// write prof.SBPL to a private file, then run
//	argv := prof.Argv(file, []string{"sh", "-c", "make test"})
//
// # Paths enter only as parameters
//
// No path from the policy or the options is ever pasted into the SBPL text:
// each distinct path becomes one parameter (R0, R1, … for roots in
// shallow-to-deep order, A0, … for ancestors, D0, … for extra devices) that
// the profile names as (param "R0") and that sandbox-exec receives as
// -D R0=/the/path. A path with quotes, parentheses, semicolons, backslashes
// or newlines changes the parameter values and nothing else, so it cannot
// add a rule. The text names only fixed device nodes of its own.
//
// # How the model is encoded
//
// The profile starts from (allow default): the model reads everywhere but
// under denied roots, so the filesystem rules subtract rather than add. SBPL
// takes the last rule that matches an operation, and the roots are emitted
// shallow to deep, each root deciding file-read*, file-write* and
// process-exec for its whole subtree (subpath):
//
//	denied        (deny  file-read* file-write* process-exec (subpath R))
//	readonly      (allow file-read* process-exec (subpath R))
//	              (deny  file-write* (subpath R))   ; in every write mode
//	writable,     (allow file-read* file-write* process-exec (subpath R))
//	baseWritable
//
// so the last matching root rule is the deepest root containing the path,
// which is the model's "most specific root wins" (policy.Canonical.Access).
// With restrictWrites a (deny file-write*) comes before the roots and
// decides every path no root contains. Executing a file counts as reading
// it: a binary under a denied root cannot be run.
//
// After the roots come three groups of exact (literal) rules:
//
//   - traversal: file-read-metadata is allowed on the unreadable ancestors
//     of every readable root (a writable carve inside a denied root), so
//     stat, realpath and getcwd work inside the carve. Those directories
//     stay unreadable and unlistable; only their own metadata is visible.
//   - devices: /dev/null, zero, random, urandom, tty, ptmx, /dev/ttysN and
//     /dev/fd are readable and writable in every mode (DESIGN.md §1: devices
//     are outside the five fields), plus Options.Devices.
//   - moves (DESIGN.md §2 class 3): every ancestor of a denied or readonly
//     root that the model lets the process write gets file-write-unlink
//     denied, so it can be neither removed nor renamed away (rename checks
//     unlink on its source), and may not be created as a symbolic link,
//     which would send the protected path somewhere writable. Creating it as
//     a directory stays allowed (git init must work where .git/hooks is
//     protected).
//
// A path that does not exist yet needs nothing: SBPL matches path strings,
// so a denied path the process creates is denied from its first byte.
//
// # Firmlinks
//
// On macOS /tmp, /var and /etc are symbolic links into /private, and the
// kernel matches resolved paths. A policy canonicalized on the Mac already
// says /private/tmp; a policy canonicalized elsewhere (a profile rendered on
// Linux for a Mac) is rewritten here: a root at or under /tmp, /var or /etc
// becomes /private/… before sorting. Two roots that meet after this rewrite
// in different fields are an error, as in Canonicalize.
//
// # Processes, terminal, network
//
// process-exec and process-fork are allowed; signals, process-info* and
// task ports (mach-priv-task-port, what a debugger needs) are allowed only
// for targets in the same sandbox. TIOCSTI is denied with
// (deny file-ioctl (ioctl-command TIOCSTI)), which sandbox-exec understands
// from macOS 13; older systems refuse the profile, so the launch fails
// closed. With Network false every network* operation is denied, including
// AF_UNIX connects: a socket such as docker.sock or an ssh-agent is a way
// out of the sandbox. Pipes and socketpair are not network operations and
// keep working.
//
// (allow default) also leaves open the system's ways of starting a process
// that answers to no profile: launchd jobs, LaunchServices (open), Apple
// Events (osascript driving Terminal) and mounts. The profile ends by
// denying job-creation, lsopen, appleevent-send, file-mount and
// file-unmount, user-preference-write (cfprefsd writes plists for the
// caller, outside every path rule), and executing launchctl, open and
// osascript. Whether these close every such door is for the macOS leg of
// CI to show (conformance case launchd-escape).
//
// # Size
//
// Parameters travel on sandbox-exec's command line, and macOS has an
// ARG_MAX of 1 MiB shared by arguments and environment. Render refuses a
// policy whose parameters would need more than MaxParamBytes (half of it)
// with ErrTooLarge instead of letting exec fail with E2BIG. The profile text
// itself goes through a file (-f) and has no such limit.
package seatbelt
