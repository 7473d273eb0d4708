// Package seatbelt renders a canonical cordon policy as a macOS Seatbelt
// profile (SBPL) for /usr/bin/sandbox-exec. It is a pure renderer: it runs
// nothing, reads nothing from the host, and builds and tests on any OS;
// the launcher runs what it renders (launcher/seatbelt_darwin.go).
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
// add a rule. The text names only fixed paths of its own: device nodes,
// the data volume, and the launchers it refuses to run.
//
// # How the model is encoded
//
// The profile starts from (allow default): the model reads everywhere but
// under denied roots, so the filesystem rules subtract rather than add. SBPL
// takes the last rule that matches an operation, and the roots are emitted
// shallow to deep, each root deciding file-read*, file-write* and
// process-exec for its whole subtree (subpath):
//
//	denied        (deny  file-read* file-write* file-link file-clone process-exec (subpath R))
//	readonly      (allow file-read* process-exec (subpath R))
//	              (deny  file-write* file-link (subpath R))   ; in every write mode
//	writable,     (allow file-read* file-write* file-link process-exec (subpath R))
//	baseWritable
//
// so the last matching root rule is the deepest root containing the path,
// which is the model's "most specific root wins" (policy.Canonical.Access).
// With restrictWrites a (deny file-write* file-link) comes before the roots and
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
//     /dev/fd are readable and writable in every mode (docs/design.md:
//     devices are outside the five fields), plus Options.Devices.
//   - moves (docs/threat-model.md, class 3): every ancestor of a denied or
//     readonly root that the model lets the process write gets
//     file-write-unlink denied, so it can be neither removed nor renamed
//     away (rename checks unlink on its source), and file-write-create
//     denied for anything but a directory. A symbolic link created there,
//     or made elsewhere and renamed there, would send the protected path
//     somewhere writable; the rule does not ask for (vnode-type SYMLINK)
//     because the check of a rename's destination may not know what
//     arrives, and (require-not (vnode-type DIRECTORY)) then still denies.
//     Creating the ancestor as a directory stays allowed (mkdir -p, and
//     git init where .git/hooks is protected).
//
// A path that does not exist yet needs nothing: SBPL matches path strings,
// so a denied path the process creates is denied from its first byte.
//
// # Spellings: firmlinks and the data volume
//
// On macOS /tmp, /var and /etc are symbolic links into /private, and the
// kernel matches resolved paths. A policy canonicalized on the Mac already
// says /private/tmp; a policy canonicalized elsewhere (a profile rendered on
// Linux for a Mac) is rewritten here: a root at or under /tmp, /var or /etc
// becomes /private/… before sorting.
//
// Since macOS 10.15 the user's files live on a separate APFS volume mounted
// at /System/Volumes/Data and reached through firmlinks (/Users, /private,
// /Library, /Applications, /opt, /usr/local, …), so /Users/me/.ssh is also
// /System/Volumes/Data/Users/me/.ssh. Which spelling the kernel hands
// Seatbelt for an access through the long one has not been checked on a
// Mac, so every path rule matches both: each (subpath P) or (literal P) is
// followed by the same filter on (string-append "/System/Volumes/Data" P).
// That costs profile text, not parameters. A root given in the long
// spelling is folded into the short one before sorting, so the deepest
// root still comes last under either spelling; roots at /System,
// /System/Volumes or the data volume itself, which contain the data
// spelling of every path, are emitted right after "/", and an ancestor that
// is writable or denied under either spelling gets the move or traversal
// rule. Paths of the sealed system
// volume get a data spelling that names nothing; listing the firmlinks
// instead (/usr/share/firmlinks) would go stale with a release that adds
// one. Two roots that meet after these rewrites in different fields are an
// error, as in Canonicalize.
//
// # Processes, terminal, network
//
// process-exec and process-fork are allowed; signals, process-info* and
// task ports (mach-priv-task-port, what a debugger needs) are allowed only
// for targets in the same sandbox. TIOCSTI, which pushes bytes into the
// input of the terminal the sandbox was started from, is denied by number,
// (deny file-ioctl (ioctl-command 2147578994)), 0x80017472 being
// _IOW('t', 114, char): the symbol TIOCSTI is an unbound variable to the
// SBPL compiler of macOS 13 and 14, which then refuses the whole profile.
// With Network false every network* operation is denied, including
// AF_UNIX connects: a socket such as docker.sock or an ssh-agent is a way
// out of the sandbox. Pipes and socketpair are not network operations and
// keep working. With ProxyPort (a network allowlist), the one exception is
// (allow network-outbound (remote tcp "localhost:PORT")): cordon's proxy
// on the host's loopback, which answers only the launch's credential. The
// port is a number, pasted into the profile; never a parameter or a path.
// Name lookups go through the system's resolver service (a mach-lookup,
// not a network operation), so DNS still answers inside: a limit of every
// mode but the host's network.
//
// (allow default) also leaves open the system's ways of starting a process
// that answers to no profile: launchd jobs, LaunchServices (open), Apple
// Events (osascript driving Terminal) and mounts. The profile ends by
// denying job-creation, lsopen, appleevent-send, file-mount and
// file-unmount, user-preference-write (cfprefsd writes plists for the
// caller, outside every path rule), file-write-setugid (a set-user-ID
// program made inside would run as its owner for anyone later; last, so no
// path rule allows it again), and executing launchctl, open and
// osascript. The service operations carry no path filter: they are checked
// for the caller whatever program asks, so a renamed copy of open or
// osascript meets the same deny; the exec denies only turn the common case
// into a plain "Operation not permitted". Whether these close every such
// door, a raw mach-lookup of launchservicesd included, is for the macOS leg
// of CI to show (conformance cases launchd-escape, launchservices-copy).
//
// # Setuid programs
//
// macOS refuses to run a set-user-ID or set-group-ID program inside a
// Seatbelt sandbox, so /bin/ps, and with it scripts that call it (Homebrew's
// `brew shellenv` asks ps for the parent shell), fail with "Operation not
// permitted". The profile keeps it that way: SBPL could run a named
// program unsandboxed ((allow process-exec (with no-sandbox) …)), but a
// program outside the sandbox, run with arguments and environment the
// sandbox chose, is a way out, and whether the modifier compiles on every
// supported release is unverified. Run such commands outside cordon.
//
// # Size
//
// Parameters travel on sandbox-exec's command line, and macOS has an
// ARG_MAX of 1 MiB shared by arguments and environment. Render refuses a
// policy whose parameters would need more than MaxParamBytes (half of it)
// with ErrTooLarge instead of letting exec fail with E2BIG. The profile text
// itself goes through a file (-f) and has no such limit.
//
// Seatbelt compiles each rule's filters into one pattern and refuses the
// profile when a pattern passes 65,535 bytes. A rule that lists paths
// (traversal, the two move rules, extra devices) is therefore split into
// consecutive rules whose paths, both spellings counted, stay within
// MaxRulePatternBytes (16 KiB, a 4x margin for what the compiler adds):
// the same operation and action over a part of the list each, in the
// list's sorted order, so the profile is the same for the same policy and
// the split changes no decision. Without it, 1,000 denied directories each
// with a writable carve under a 64-byte base give one traversal rule of
// about 100 KB.
//
// # Compatibility
//
// Every construct the profile uses, and where it is known to compile. The
// probe of package detect compiles all of them (ProbeProfile) before
// Seatbelt is called usable, so on a release where one does not, detection
// fails with sandbox-exec's message instead of every command. "yes" means
// known from public profiles in daily use on that release (Apple's own,
// Chromium's, Firefox's, other agent sandboxes); cordon itself has not run
// on a Mac when this was written: the macOS CI leg (macos-14, macos-26)
// is what verifies it.
//
//	construct              kind       13   14   15   26   notes
//	default                operation  yes  yes  yes  yes  (allow default) first
//	process-exec           operation  yes  yes  yes  yes
//	process-fork           operation  yes  yes  yes  yes
//	signal                 operation  yes  yes  yes  yes  with (target same-sandbox)
//	process-info*          operation  yes  yes  yes  yes  with (target same-sandbox)
//	mach-priv-task-port    operation  yes  yes  yes  yes  with (target same-sandbox)
//	file-ioctl             operation  yes  yes  yes  yes
//	network*               operation  yes  yes  yes  yes
//	network-outbound       operation  yes  yes  yes  yes  with a proxy port only
//	file-read*             operation  yes  yes  yes  yes
//	file-read-metadata     operation  yes  yes  yes  yes
//	file-write*            operation  yes  yes  yes  yes
//	file-write-create      operation  yes  yes  yes  yes
//	file-write-unlink      operation  yes  yes  yes  yes
//	file-link              operation  ?    ?    ?    ?    link(2) on the source; outside file-write*
//	file-clone             operation  ?    ?    ?    ?    clonefile(2) on the source; outside file-read*
//	job-creation           operation  yes  yes  yes  yes
//	lsopen                 operation  yes  yes  yes  yes
//	appleevent-send        operation  yes  yes  yes  yes
//	file-mount             operation  yes  yes  yes  yes
//	file-unmount           operation  yes  yes  yes  yes
//	user-preference-write  operation  yes  yes  yes  yes
//	file-write-setugid     operation  ?    ?    ?    ?    one of Seatbelt's file-write operations; in the probe
//	subpath                filter     yes  yes  yes  yes
//	literal                filter     yes  yes  yes  yes
//	regex                  filter     yes  yes  yes  yes  #"^/dev/ttys[0-9]+$" only
//	target                 filter     yes  yes  yes  yes  same-sandbox only
//	vnode-type             filter     yes  yes  yes  yes  DIRECTORY only
//	require-all            filter     yes  yes  yes  yes
//	require-any            filter     yes  yes  yes  yes
//	require-not            filter     yes  yes  yes  yes
//	ioctl-command          filter     yes  yes  yes  yes  a number; a name: no on 13, 14
//	remote                 filter     ?    ?    ?    yes  tcp "localhost:PORT" with a proxy port only; not in the probe (see below)
//	param                  expression yes  yes  yes  yes  sandbox-exec -D
//	string-append          expression yes  yes  yes  yes  the data-volume spelling
//
// remote is not in the probe: a release that refused it would then refuse
// every profile, while it matters only to launches with a network
// allowlist, which then fail alone (exit 125 with sandbox-exec's message).
//
// The tests' SBPL evaluator refuses what a supported release refuses: a
// name in ioctl-command ("unbound variable") and a rule over 65,535 bytes
// of paths; a test fails when the renderer emits a construct missing from
// this table or from the probe.
package seatbelt
