// Package testhook holds the few switches the conformance suite's mutation
// check flips to weaken the sandbox on purpose, one hardening step at a
// time, and prove that some named case then fails. Every hook is nil or
// false in production; nothing outside tests may set them.
//
// The hooks live in the launcher's process, so a mutated run must launch
// through the launcher API in that process (see conformance's mutation
// test), not through the cordon binary.
package testhook

// Launch, when non-nil, is called by the launcher at named moments of
// each start, with the *launcher.Cmd being started (as any: this package
// imports nothing): "resolve" just before the launcher resolves the policy
// it was given, and "mount" once all is resolved and opened (under landlock: the plan
// rendered, its objects not yet opened by the init), just before the
// sandbox starts and mounts it (not when Cmd.Exec hands the process over to
// bwrap). A test acts there at the exact moment a racing attacker aims at
// (the conformance suite's swaps), instead of racing it and hoping to win.
var Launch func(cmd any, point string)

// BwrapArgs, when non-nil, rewrites bwrap's rendered options (Plan.Args)
// just before a launch.
var BwrapArgs func(args []string) []string

// SkipCloseOnExec, when true, stops the launcher marking inherited
// descriptors close-on-exec before it starts a sandbox.
var SkipCloseOnExec bool

// BwrapSharedMounts, when true, starts bwrap in the launcher's own mount
// namespace even where it could have one whose mounts are private.
var BwrapSharedMounts bool

// SkipSeccomp, when true, launches bwrap without the seccomp filter.
var SkipSeccomp bool

// NoEntryGate launches native and bwrap without the entry gate: absent
// protected names are then kept by nothing (the mutation check; Exec's
// handover to bwrap, which has no gate to serve).
var NoEntryGate bool

// Seccomp, when non-nil, replaces the seccomp program of a launch with the
// network on or off.
var Seccomp func(network bool) []byte

// SkipStateDeny, when true, stops the launcher denying cordon's state
// directory inside the sandbox.
var SkipStateDeny bool

// SkipTtyPty, when true, stops the launcher's interactive mode (Cmd.Tty)
// giving the sandbox a pty of its own: it gets the caller's terminal.
var SkipTtyPty bool

// TtyKeepReading, when true, leaves the interactive mode's relay reading
// the caller's terminal after the command ended.
var TtyKeepReading bool

// SkipTtySetsid, when true, makes interactive mode use its own helper
// rather than setsid(1), so that tests cover both.
var SkipTtySetsid bool

// SafeFSFollow, when true, makes internal/safefs resolve paths as open(2)
// does, following symlinks anywhere, and write files in place through
// whatever the name points at.
var SafeFSFollow bool

// Composition steps of workspace.Compose (docs/threat-model.md):
var (
	// SkipAgentProtections leaves an agent's directory under --agents-root
	// without a workspace's protections.
	SkipAgentProtections bool
	// SkipProtectExecutables leaves cordon's own executable writable
	// wherever the policy allows writes.
	SkipProtectExecutables bool
	// SkipProtectPath leaves the launcher's PATH directories writable.
	SkipProtectPath bool
	// SkipProtectPolicyFile leaves the --policy file writable wherever
	// the policy allows writes.
	SkipProtectPolicyFile bool
	// SkipProtectHomeAgents leaves agents' configurations under a
	// writable HOME writable.
	SkipProtectHomeAgents bool
	// SkipProtectHostCaches leaves the host's package and build caches
	// writable wherever the policy allows writes.
	SkipProtectHostCaches bool
	// NoNestedConfigs makes the scan for repositories blind to agents'
	// and editors' configuration in the directories it reads (only the
	// top of a writable root and git work trees keep theirs).
	NoNestedConfigs bool
	// SkipIdentityCheck launches whatever the launcher's own resolution
	// finds, by path: no comparison with the identities the policy was
	// built for, no binds from descriptors.
	SkipIdentityCheck bool
)

// NetAllowAll, when true, makes the network proxy allow every host and
// port (no filtering by the allowlist).
var NetAllowAll bool

// NetNoInternalGuard, when true, lets the network proxy connect an
// allowed name to internal addresses (loopback, private, link-local...)
// even when no pattern names the host exactly.
var NetNoInternalGuard bool

// AuditFollowLinks, when true, makes the audit log open a named log the old
// way: following symlinks, with no check of what the file is or who owns it.
var AuditFollowLinks bool

// AuditUnkeyed, when true, keys every audit chain with an all-zero key, so
// the chain has no secret: anyone can recompute it.
var AuditUnkeyed bool

// AuditRenameAnchor, when true, replaces an audit log's anchor by writing
// a temporary file and renaming it over the old one, instead of rewriting
// it in place.
var AuditRenameAnchor bool

// AuditNoKeptAnchor, when true, stops cordon keeping (and checking) its
// own copy of each named audit log's anchor in its state directory.
var AuditNoKeptAnchor bool

// Switches in package policy: each removes one protection of git metadata
// or of derived roots (docs/threat-model.md, classes 11, 12 and 14).
var (
	// GitPerPath protects git directories path by path by default, as
	// --allow-git-writes does, instead of as a whole.
	GitPerPath bool
	// GitWritesOpenModules leaves modules/ writable under
	// --allow-git-writes.
	GitWritesOpenModules bool
	// DerivedUnchecked follows pointers out of the writable root and
	// keeps every derived root, as if it were named by the caller.
	DerivedUnchecked bool
	// StayOnSteered keeps the roots a caller named through a link the
	// sandbox can write, wherever the link leads (policy's unsteer).
	StayOnSteered bool
	// KeepSwappable lets a denied or read-only root be named through a
	// link the sandbox can write, protecting only where the link points
	// (policy's refuseSwappable).
	KeepSwappable bool
	// NoConfigRefs leaves what a repository's config names in the work
	// tree (core.hooksPath, include.path, drivers) unprotected.
	NoConfigRefs bool
	// NoSubmoduleDotGit leaves the .git of a submodule not initialised
	// yet unprotected.
	NoSubmoduleDotGit bool
	// ScanForgets drops the repositories earlier scans found.
	ScanForgets bool
	// NoEnclosingRepo leaves what the repository above a writable root
	// without .git names inside that root (its hooksPath, includes,
	// submodule paths) unprotected.
	NoEnclosingRepo bool
	// ClosedUnchecked takes what cannot be looked up for a closed
	// directory (no permission) as absent: the scan skips it, and a root
	// below it is dropped with a note instead of failing the launch.
	ClosedUnchecked bool
	// NoTopHEAD leaves HEAD at the top of a workspace without .git
	// unprotected.
	NoTopHEAD bool
	// NestedLinksRefuse refuses a launch when a name protected in a
	// nested repository is a symlink.
	NestedLinksRefuse bool
)

// NativeWeaken, when set, names the hardening steps (mutations of the
// conformance suite's check), separated by commas, that a launch through
// the native backend leaves out: "ancestor-pins", "mask-readonly",
// "mask-perms", "depth-order", "cap-drop", "close-on-exec",
// "pid-namespace", "new-session", "proc-sys-readonly", "proc-keys-mask",
// "disable-userns", "landlock" (the init's Landlock domain),
// "readonly-root" (the read-only mounts of everything but the policy's
// roots), "own-root" (the sandbox's root a tmpfs of its own, not the
// host's), "private-propagation". Steps the init takes reach it in its Spec (native.Spec.Weaken).
// The launch benchmark sets it at link time (-X) for the init of one wall.
var NativeWeaken string

// SkipDescriptorCheck, when true, hands the sandbox whatever descriptors
// it is given as stdio or ExtraFiles (directories, O_PATH handles, ...).
var SkipDescriptorCheck bool

// SkipTerminalReplace, when true, hands the caller's terminal to a
// sandbox without a pty of its own, as it is.
var SkipTerminalReplace bool

// SkipTermModeReset, when true, leaves the terminal modes the sandbox's
// output switched on (alternate screen, mouse reporting, ...) after it.
var SkipTermModeReset bool

// SkipTermSettle, when true, returns from a run without reading the
// terminal's answers to what the sandbox asked (they then reach the
// user's shell).
var SkipTermSettle bool

// SkipClipboardFilter, when true, passes the sandbox's OSC 52 clipboard
// queries on to the user's terminal.
var SkipClipboardFilter bool

// MetagateAct, when non-nil, is called by package metagate's supervisor
// with the calling thread's id and the path of the object it resolved,
// decided and will now change, just before it performs the call: a test
// swaps the path, or signals the caller, there.
var MetagateAct func(tid int, path string)

// MetagateConnect, when non-nil, is called by package metagate's
// supervisor with the calling thread's id and the address of the
// connect(2) argument in its memory, once it has read that address and
// decided it names the proxy, just before it connects the socket: a test
// rewrites the caller's address there.
var MetagateConnect func(tid int, addr uintptr)

// EntrygateAct is MetagateAct for the entry gate (package metagate,
// EntryRules): called with the path of the name it decided, just before
// it makes, removes, renames, links or opens it itself.
var EntrygateAct func(tid int, path string)

// EntrygateAddfd, when non-nil, is called by the entry gate's supervisor
// on its own (locked) thread just before it hands the caller the
// descriptor it opened for it (SECCOMP_IOCTL_NOTIF_ADDFD): a test
// signals that thread while it waits in the ioctl.
var EntrygateAddfd func()

// LandlockWeaken is NativeWeaken for the landlock backend: the steps its
// init leaves out ("landlock", "seccomp", "cap-drop", "new-session",
// "check-paths"; and "metagate", which the launcher leaves out: the
// filter without the metadata gate), separated by commas
// (landlock.Spec.Weaken).
var LandlockWeaken string

// NetEmit, when non-nil, is called by package netproxy before it sends
// each event, with whether the connection was allowed, outside the lock
// that orders the events: a test holds one event there to make another
// come first.
var NetEmit func(allowed bool)

// GateUnixConnect, when non-nil, is called by package gate's supervisor
// with the calling thread's id and the name it resolved and pinned for a
// connect to a Unix socket of the sandbox's own, just before it connects
// through the pin: a test swaps the name for a host socket there.
var GateUnixConnect func(tid int, name string)

// LandlockProbe, when non-nil, is called by the landlock backend's probe
// with its directory just made, the moment a signal or a kill that ends
// the process during detection aims at.
var LandlockProbe func(dir string)

// MountMax, when not zero, stands for /proc/sys/fs/mount-max: a test
// meets the limit without lowering the host's.
var MountMax int
