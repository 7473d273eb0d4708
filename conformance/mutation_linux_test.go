package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The mutation check: a suite that passes a weakened sandbox proves
// nothing. Each mutation removes one hardening step from what the launcher
// runs (through internal/testhook, so it must run in-process through the
// launcher API); the catalogue then runs under it, and at least one of the
// cases named in catchers must fail. Which cases caught which mutation, as
// seen with a root launcher (Linux 6.18, bubblewrap 0.8), besides the
// cases of FINDINGS.md that fail unmutated:
//
//	ancestor-pins+gate (the pins alone: the entry gate holds)
//	                swap-dir-for-symlink, rename-ancestor-of-denied,
//	                rename-ancestor-of-readonly, rename-ancestor-open-mode,
//	                rename-python, rename-perl, rename-syscall,
//	                rename-git-dir-away, rename-workspace-away
//	cap-drop        undo-capabilities; root then keeps CAP_DAC_OVERRIDE, so
//	                deny-list-dir, deny-read-dir-outside-workspace,
//	                deny-credentials-in-home, open-mode-denied,
//	                symlink-to-denied-dir, proc-1-root, model-seed-*
//	mask-readonly   deny-write-dir (chmod of the mask, then writes)
//	mask-perms      deny-list-dir, deny-read-dir-outside-workspace,
//	                deny-credentials-in-home, open-mode-denied,
//	                symlink-to-denied-dir, create-denied-missing-file,
//	                proc-1-root, model-seed-*
//	close-on-exec   fd-inherited-file, fd-inherited-dir, fd-inherited-writable
//	pid-namespace   proc-host-root-cwd-fd, proc-scan-all, proc-signal-host,
//	                undo-capabilities (/proc/1 is then the host's init),
//	                tty-keystrokes-after-exit (a reader left behind),
//	                proc-outlive-launch (writers left behind);
//	                not proc-ptrace-host: the user namespace alone refuses
//	                ptrace of a process outside it
//	depth-order     most cases of classes 1-7 and the model
//	new-session     tty-controlling-terminal (TIOCSTI itself is also refused
//	                by the seccomp filter, so tty-tiocsti alone would not
//	                notice)
//	seccomp         proc-unix-socket-host, net-unix-socket, and the
//	                kernel-* cases below
//	seccomp-keyrings
//	                kernel-keyring-read, kernel-keyring-plant,
//	                kernel-bpf-userfaultfd-syslog (userfaultfd in user
//	                mode needs no privilege; bpf and syslog are refused by
//	                this host's sysctls as well)
//	proc-sys-readonly
//	                kernel-sysctl-write (root only: the host's root owns
//	                the sysctl files)
//	proc-keys-mask  kernel-keyring-list
//	seccomp-socket-allowlist
//	                kernel-vsock, kernel-vsock-network-on,
//	                kernel-netlink-protocols(-network-on),
//	                kernel-socket-families(-network-on),
//	                net-socket-families
//	tty-pty         tty-interactive-modes (stty on stdin reaches the user's
//	                terminal)
//	tty-relay-stop  tty-interactive-keystrokes-after-exit
//	terminal-settle tty-answers-late-no-tty (the late answers reach the
//	                user's shell)
//	clipboard-filter tty-answers-late-no-tty (the OSC 52 query reaches the
//	                terminal)
//	state-deny      undo-runtime-state, undo-stall-launches,
//	                cross-state-dir-open-mode, cross-state-dir-writable-parent
//	disable-userns  undo-nested-userns-unshare, undo-nested-userns-syscall
//	                (the nested namespace is created; the locked mounts
//	                still hold)
//	git-whole       work-git, host-git-commondir, host-git-gitlink,
//	                host-git-rebase-todo, host-git-info-alternates
//	git-writes-modules  host-git-submodule-init-git-writes
//	derived-restrict    cross-launch-derived-carveout-git-writes,
//	                cross-launch-derived-in-denied (in the default mode a
//	                pointer at a denied store names the store itself, a
//	                root already, so nothing is carved)
//	config-refs     host-git-hookspath-in-worktree(-git-writes)
//	submodule-dotgit  host-git-submodule-gitfile(-git-writes)
//	scan-memory     cross-launch-scan-bound
//	enclosing-repo  host-git-enclosing-repository(-git-writes)
//	closed-dirs     cross-launch-closed-dir, cross-launch-closed-top,
//	                cross-launch-closed-home (as the unprivileged user:
//	                root reads a closed directory anyway)
//	top-head        host-git-bare-top, host-git-bare-top-git-writes
//	nested-links    dos-hostile-nested-git, cross-launch-derived-carveout,
//	                cross-launch-derived-carveout-git-writes
//	safefs-follow   race-filetools-write, race-filetools-read
//	audit-follow    audit-log-planted-symlink (the host's append creates
//	                the missing ~/.bash_profile the planted log points at;
//	                the link to ~/.bashrc is still refused by the anchor's
//	                MAC, which the sandbox cannot forge)
//	audit-unkeyed   audit-log-rechain
//	audit-anchor-rename  audit-log-readonly-while-appending (the rename
//	                detaches the running sandbox's read-only mount of the
//	                anchor, which it then truncates and removes)
//	audit-kept-anchor  audit-log-rollback, audit-log-removed
//	agent-protections    agent-dir-autoexec, agent-dir-autoexec-with-workspace
//	protect-executables  runs-next-cordon-in-workspace, runs-next-cordon-open-mode
//	protect-path         runs-next-path-dir
//	protect-policy-file  runs-next-policy-file
//	protect-home-agents  runs-next-home-agent-configs
//	identity-check  cross-launch-swap-at-resolve, cross-launch-swap-at-mount
//	private-propagation  boundary-mount-arrives-later (native)
//	bwrap-private-mounts boundary-mount-arrives-later (bwrap, root only:
//	                FINDINGS.md F10)
//	nested-configs  later-nested-agent-configs
//	steered-roots        cross-launch-steered-roots
//	swappable-names      symlink-ancestor-protected
//	net-filter      net-other-port, net-other-host, net-ip-literal
//	net-netns       net-direct-connect, net-no-proxy-vars, net-dns (the
//	                helper's listener then lands on the host's loopback:
//	                these cases run one at a time)
//	net-internal-guard  net-private-behind-name
//
// Through native, whose init also has Landlock, the cases a Landlock
// domain refuses as well no longer show their step alone: close-on-exec
// is caught by fd-inherited-file and fd-inherited-writable (not
// fd-inherited-dir), pid-namespace by proc-outlive-launch and
// tty-keystrokes-after-exit (not proc-signal-host, nor
// proc-host-root-cwd-fd: the init mounts no /proc without a pid
// namespace, and its own root then has an empty one), cap-drop by undo-capabilities (not
// undo-umount-mask nor undo-remount-rw). Those are the two-wall rows of
// docs/threat-model.md: the mutations landlock, readonly-root,
// close-on-exec-dir, pid-namespace-walls and cap-drop-walls require their
// catchers to pass (the other wall holds), and the ones named X+landlock,
// which remove both walls, require one to fail.
//
// agent-protections .. identity-check switch off a step of workspace.Compose
// or of the launcher through a testhook flag.
//
// The policy switches (git-whole to nested-links) act in package policy,
// which the in-process launcher executor compiles each case's policy with.
//
// The test logs the failing cases of every mutation.

const (
	envHelper  = "CORDON_MUTANT_HELPER"
	envOut     = "CORDON_MUTANT_OUT"
	envBackend = "CORDON_MUTANT_BACKEND"
	envMap     = "CORDON_MUTATION_MAP"
)

type mutation struct {
	name     string
	step     string // the hardening step removed
	args     func([]string) []string
	closeFds bool // skip the launcher's close-on-exec pass
	seccomp  bool // launch without the seccomp filter
	// filter, when set, replaces the seccomp program (network on or off)
	filter func(network bool) []byte
	state  bool   // leave cordon's state directory open inside
	hooks  func() // sets other testhooks (policy switches among them)
	// onlyCatchers keeps the mutant to its catchers even when the whole
	// map is asked for (CORDON_MUTATION_MAP): a policy switch changes only
	// what the git and workspace presets derive, and some removals hang
	// unrelated cases.
	onlyCatchers bool
	rootOnly     bool // only a root launcher keeps what the step removes
	// unprivileged runs the mutant as the unprivileged user (when the
	// check runs as root): the step matters only to a user whom file
	// modes bind.
	unprivileged bool
	// onlyBackend, when set, is the one backend the check runs this
	// mutation through (its catchers apply there only).
	onlyBackend string
	// serial runs the cases one at a time: without their own network
	// namespace, sandboxes with a proxy share the host's loopback port.
	serial bool
	// weaken, when set, is the native init's list of steps to leave out
	// (testhook.NativeWeaken), instead of the mutation's name.
	weaken string
	// holds inverts the check: another wall keeps what the step kept, so
	// every catcher must still pass. With a mutation removing both walls
	// (which must be caught), it proves a promise the two-wall table of
	// docs/threat-model.md says both walls keep.
	holds    bool
	catchers []string
}

var mutations = []mutation{
	// Two walls under native and bwrap: the entry gate refuses renaming
	// an ancestor of a protected root (the model's MayEntry) where the
	// pins answer EBUSY, so without the pins the gate holds, and without
	// both the rename goes through.
	{name: "ancestor-pins", step: "writable ancestors of denied/readonly roots bound onto themselves (the entry gate holds)", args: dropPins, holds: true,
		catchers: []string{"rename-ancestor-of-denied", "rename-ancestor-of-readonly", "rename-git-dir-away", "swap-dir-for-symlink", "rename-ancestor-open-mode"}},
	{name: "ancestor-pins+gate", step: "writable ancestors of denied/readonly roots bound onto themselves, and the entry gate", args: dropPins, weaken: "ancestor-pins",
		hooks:    func() { testhook.NoEntryGate = true },
		catchers: []string{"rename-ancestor-of-denied", "rename-ancestor-of-readonly", "rename-git-dir-away", "swap-dir-for-symlink", "rename-ancestor-open-mode"}},
	{name: "cap-drop", step: "--cap-drop ALL", args: dropFlag("--cap-drop", 1), rootOnly: true,
		catchers: []string{"undo-capabilities", "undo-umount-mask", "undo-remount-rw"}},
	{name: "mask-readonly", step: "masks of denied directories bound read-only (--bind instead of --ro-bind)",
		args:     rewriteMasks(func(src, dst string) []string { return []string{"--bind", src, dst} }),
		catchers: []string{"deny-write-dir", "create-denied-missing-file", "undo-remount-rw"}},
	{name: "mask-perms", step: "masks of denied directories traversable but not listable (a plain tmpfs instead)",
		args:     rewriteMasks(func(src, dst string) []string { return []string{"--tmpfs", dst} }),
		catchers: []string{"deny-list-dir", "deny-read-dir-outside-workspace", "symlink-to-denied-dir"}},
	{name: "close-on-exec", step: "the launcher marking inherited descriptors close-on-exec", closeFds: true,
		catchers: []string{"fd-inherited-file", "fd-inherited-dir", "fd-inherited-writable"}},
	// Only its catchers: without a pid namespace, what a case leaves
	// running in the background outlives the sandbox and holds its output
	// open (the network cases' clients), so the whole catalogue would hang.
	{name: "pid-namespace", step: "--unshare-pid", args: dropFlag("--unshare-pid", 0), onlyCatchers: true,
		catchers: []string{"proc-host-root-cwd-fd", "proc-signal-host", "proc-ptrace-host", "tty-keystrokes-after-exit", "proc-outlive-launch"}},
	{name: "depth-order", step: "mounts sorted shallow to deep (reversed here)", args: reverseMounts,
		catchers: []string{"deny-read-file", "readonly-write-file", "autoexec-git-hooks"}},
	{name: "new-session", step: "--new-session", args: dropFlag("--new-session", 0),
		catchers: []string{"tty-controlling-terminal", "tty-tiocsti", "tty-tiocsti-steal-ctty"}},
	{name: "seccomp", step: "the seccomp filter (--seccomp FD)", seccomp: true,
		catchers: []string{"proc-unix-socket-host", "net-unix-socket"}},
	{name: "seccomp-keyrings", step: "the seccomp filter's refusal of add_key, keyctl, request_key (and bpf, userfaultfd, syslog)",
		filter:   withoutRefusals("add_key", "keyctl", "request_key", "bpf", "userfaultfd", "syslog"),
		catchers: []string{"kernel-keyring-read", "kernel-keyring-plant", "kernel-bpf-userfaultfd-syslog"}},
	{name: "proc-sys-readonly", step: "/proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus bound read-only", args: dropProcCovers,
		rootOnly: true, catchers: []string{"kernel-sysctl-write"}},
	{name: "proc-keys-mask", step: "/proc/keys and /proc/key-users masked", args: dropProcKeys,
		catchers: []string{"kernel-keyring-list"}},
	{name: "seccomp-socket-allowlist", step: "the seccomp filter's socket allowlist (the old denylist of AF_UNIX alone instead)",
		filter:   socketDenylist,
		catchers: []string{"kernel-vsock", "kernel-vsock-network-on", "kernel-netlink-protocols", "kernel-socket-families", "net-socket-families"}},
	{name: "disable-userns", step: "--disable-userns", args: dropFlag("--disable-userns", 0),
		catchers: []string{"undo-nested-userns-unshare", "undo-nested-userns-syscall"}},
	{name: "tty-pty", step: "interactive mode's own pty for the sandbox (it gets the caller's terminal)",
		hooks:    func() { testhook.SkipTtyPty = true },
		catchers: []string{"tty-interactive-modes"}},
	{name: "tty-relay-stop", step: "interactive mode's relay ceasing to read the caller's terminal when the command ends",
		hooks:    func() { testhook.TtyKeepReading = true },
		catchers: []string{"tty-interactive-keystrokes-after-exit"}},
	{name: "descriptor-check", step: "the refusal of descriptors that are handles on the host (a directory, an O_PATH handle) on stdin, stdout and stderr",
		hooks:    func() { testhook.SkipDescriptorCheck = true },
		catchers: []string{"boundary-fd-dir-stdin", "boundary-fd-opath-dir-stdout", "boundary-fd-opath-file-stdin"}},
	{name: "terminal-replace", step: "the caller's terminal kept out of a sandbox without a pty of its own (stdin /dev/null, stdout and stderr a pipe)",
		hooks:    func() { testhook.SkipTerminalReplace = true },
		catchers: []string{"boundary-tty-stderr-alone", "boundary-tty-stdin-alone"}},
	{name: "terminal-mode-reset", step: "the screen modes the sandbox's output switched on, switched off after it",
		hooks:    func() { testhook.SkipTermModeReset = true },
		catchers: []string{"boundary-tty-stdout-alone", "boundary-tty-stderr-alone", "boundary-tty-evasions"}},
	{name: "terminal-settle", step: "the terminal's answers to what the sandbox asked read and discarded before cordon returns",
		hooks:    func() { testhook.SkipTermSettle = true },
		catchers: []string{"tty-answers-late-no-tty"}},
	{name: "clipboard-filter", step: "the sandbox's OSC 52 clipboard queries dropped from its output",
		hooks:    func() { testhook.SkipClipboardFilter = true },
		catchers: []string{"tty-answers-late-no-tty"}},
	{name: "state-deny", step: "cordon's state directory denied inside every sandbox", state: true,
		catchers: []string{"cross-state-dir-open-mode", "cross-state-dir-writable-parent"}},
	{name: "safefs-follow", step: "safefs's RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS and O_NOFOLLOW (paths resolved as open(2) does, writes in place)",
		hooks:    func() { testhook.SafeFSFollow = true },
		catchers: []string{"race-filetools-write", "race-filetools-read"}},
	{name: "git-whole", step: "git directories read-only as a whole by default (path by path instead)",
		hooks:        func() { testhook.GitPerPath = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-commondir", "host-git-gitlink", "host-git-rebase-todo", "host-git-info-alternates"}},
	{name: "git-writes-modules", step: "modules/ read-only under --allow-git-writes",
		hooks:        func() { testhook.GitWritesOpenModules = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-submodule-init-git-writes"}},
	{name: "derived-restrict", step: "derived roots only restrict, pointers out of the root not followed",
		hooks:        func() { testhook.DerivedUnchecked = true },
		onlyCatchers: true,
		catchers:     []string{"cross-launch-derived-carveout-git-writes", "cross-launch-derived-in-denied"}},
	{name: "config-refs", step: "paths the repository's config makes git read or run, protected in the work tree",
		hooks:        func() { testhook.NoConfigRefs = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-hookspath-in-worktree", "host-git-hookspath-in-worktree-git-writes"}},
	{name: "submodule-dotgit", step: "the .git of a submodule not initialised yet, protected",
		hooks:        func() { testhook.NoSubmoduleDotGit = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-submodule-gitfile", "host-git-submodule-gitfile-git-writes"}},
	{name: "scan-memory", step: "repositories found by earlier scans stay protected",
		hooks:        func() { testhook.ScanForgets = true },
		onlyCatchers: true,
		catchers:     []string{"cross-launch-scan-bound"}},
	{name: "closed-dirs", step: "a directory closed to the user is protected whole, and a root that cannot be looked up in a writable place fails the launch",
		hooks:        func() { testhook.ClosedUnchecked = true },
		onlyCatchers: true,
		unprivileged: true,
		catchers:     []string{"cross-launch-closed-dir", "cross-launch-closed-top", "cross-launch-closed-home"}},
	{name: "enclosing-repo", step: "what the repository above a workspace without .git names inside it, protected",
		hooks:        func() { testhook.NoEnclosingRepo = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-enclosing-repository", "host-git-enclosing-repository-git-writes"}},
	{name: "top-head", step: "HEAD protected at the top of a workspace without .git",
		hooks:        func() { testhook.NoTopHEAD = true },
		onlyCatchers: true,
		catchers:     []string{"host-git-bare-top", "host-git-bare-top-git-writes"}},
	{name: "nested-links", step: "a symlinked .git in a nested repository is noted, not refused",
		hooks:        func() { testhook.NestedLinksRefuse = true },
		onlyCatchers: true,
		catchers:     []string{"dos-hostile-nested-git"}},
	{name: "audit-follow", step: "the no-follow open of a named audit log (and its check for a regular file of the user's)",
		hooks:    func() { testhook.AuditFollowLinks = true },
		catchers: []string{"audit-log-planted-symlink"}},
	{name: "audit-unkeyed", step: "the audit chain keyed with a secret (a public all-zero key instead)",
		hooks:    func() { testhook.AuditUnkeyed = true },
		catchers: []string{"audit-log-rechain"}},
	{name: "audit-anchor-rename", step: "the audit anchor rewritten in place (replaced by a rename here)",
		hooks:    func() { testhook.AuditRenameAnchor = true },
		catchers: []string{"audit-log-readonly-while-appending"}},
	{name: "audit-kept-anchor", step: "cordon's own copy of a named audit log's anchor, in its state directory",
		hooks:    func() { testhook.AuditNoKeptAnchor = true },
		catchers: []string{"audit-log-rollback", "audit-log-removed"}},
	{name: "agent-protections", step: "a workspace's protections on the agent's directory (workspace.Compose)", hooks: func() { testhook.SkipAgentProtections = true },
		catchers: []string{"agent-dir-autoexec", "agent-dir-autoexec-with-workspace"}},
	{name: "protect-executables", step: "cordon's executable read-only (workspace.Compose)", hooks: func() { testhook.SkipProtectExecutables = true },
		catchers: []string{"runs-next-cordon-in-workspace", "runs-next-cordon-open-mode"}},
	{name: "protect-path", step: "PATH directories read-only (workspace.Compose)", hooks: func() { testhook.SkipProtectPath = true },
		catchers: []string{"runs-next-path-dir"}},
	{name: "protect-policy-file", step: "the --policy file read-only (workspace.Compose)", hooks: func() { testhook.SkipProtectPolicyFile = true },
		catchers: []string{"runs-next-policy-file"}},
	// Caught at the launcher's exact moments (its test hook), not by the
	// racing cross-launch-nested-workspace-swap, which wins a window only
	// now and then. Through native, swap-at-mount's directory exchanged
	// for another is the check's own part (the init opens every root
	// without following a link, which refuses a symlink with or without
	// it); swap-at-resolve fails there too without it, by the stubs the
	// launcher then makes through the link.
	{name: "identity-check", step: "one resolution per launch: roots checked against the identities they were built for, bound from descriptors", hooks: func() { testhook.SkipIdentityCheck = true },
		catchers: []string{"cross-launch-swap-at-resolve", "cross-launch-swap-at-mount"}},
	// Root only: the case's host side mounts.
	// Two walls: a mount that arrives is beneath no Landlock write rule.
	{name: "private-propagation", step: "the native sandbox's mounts made private once its tree is built (Landlock holds: the arriving mount is beneath no write rule)",
		onlyBackend: "native", rootOnly: true, holds: true,
		catchers: []string{"boundary-mount-arrives-later"}},
	{name: "private-propagation+landlock", step: "the native sandbox's mounts made private once its tree is built, and Landlock",
		onlyBackend: "native", rootOnly: true, weaken: "private-propagation,landlock",
		catchers: []string{"boundary-mount-arrives-later"}},
	{name: "bwrap-private-mounts", step: "bwrap started in a mount namespace of its own whose mounts are private (no host mount arrives later)",
		hooks: func() { testhook.BwrapSharedMounts = true }, onlyBackend: "bwrap", rootOnly: true,
		catchers: []string{"boundary-mount-arrives-later"}},
	{name: "steered-roots", step: "roots named through a link the sandbox can write kept only where they restrict (policy's unsteer)",
		hooks: func() { testhook.StayOnSteered = true }, onlyCatchers: true,
		catchers: []string{"cross-launch-steered-roots"}},
	{name: "swappable-names", step: "denied and read-only roots named through a link the sandbox can write refused (policy's refuseSwappable)",
		hooks: func() { testhook.KeepSwappable = true }, onlyCatchers: true,
		catchers: []string{"symlink-ancestor-protected"}},
	{name: "net-filter", step: "the network proxy's allowlist (every host and port allowed)",
		hooks:        func() { testhook.NetAllowAll = true },
		onlyCatchers: true,
		catchers:     []string{"net-other-port", "net-other-host", "net-ip-literal"}},
	{name: "net-netns", step: "the sandbox's own network namespace with a network allowlist (--unshare-net)",
		args:         dropFlag("--unshare-net", 0),
		onlyCatchers: true, serial: true,
		catchers: []string{"net-direct-connect", "net-no-proxy-vars", "net-dns"}},
	{name: "net-internal-guard", step: "the proxy's refusal of internal addresses behind a name no pattern names exactly",
		hooks:        func() { testhook.NetNoInternalGuard = true },
		onlyCatchers: true,
		catchers:     []string{"net-private-behind-name"}},
	// Two walls (docs/threat-model.md): each promise both keep is shown
	// in both directions through the native backend. Without Landlock
	// the mounts hold; without the mount-level defence Landlock holds;
	// without both, the case sees the escape.
	{name: "landlock", step: "the init's Landlock domain (the mounts hold)", onlyBackend: "native", holds: true,
		catchers: []string{"restrict-write-outside", "fd-inherited-dir", "proc-signal-host", "undo-umount-mask", "undo-remount-rw"}},
	{name: "readonly-root", step: "the read-only mounts of everything outside the writable roots (Landlock holds)", onlyBackend: "native", holds: true,
		catchers: []string{"restrict-write-outside"}},
	{name: "readonly-root+landlock", step: "the read-only mounts outside the writable roots and Landlock", onlyBackend: "native",
		weaken: "readonly-root,landlock", catchers: []string{"restrict-write-outside"}},
	{name: "close-on-exec-dir", step: "inherited descriptors closed (Landlock holds: a host directory's files are beneath no rule)", onlyBackend: "native",
		weaken: "close-on-exec", closeFds: true, holds: true, catchers: []string{"fd-inherited-dir"}},
	{name: "close-on-exec+landlock", step: "inherited descriptors closed, and Landlock", onlyBackend: "native",
		weaken: "close-on-exec,landlock", closeFds: true, catchers: []string{"fd-inherited-dir"}},
	// Only their catchers, as pid-namespace. (Without a pid namespace the
	// init cannot mount a /proc, so proc-host-root-cwd-fd finds none
	// there, with Landlock or without: no catcher here.)
	{name: "pid-namespace-walls", step: "--unshare-pid (Landlock holds: the signal scope)", onlyBackend: "native",
		weaken: "pid-namespace", holds: true, onlyCatchers: true, catchers: []string{"proc-signal-host"}},
	{name: "pid-namespace+landlock", step: "--unshare-pid and Landlock", onlyBackend: "native",
		weaken: "pid-namespace,landlock", onlyCatchers: true, catchers: []string{"proc-signal-host"}},
	{name: "cap-drop-walls", step: "--cap-drop ALL (Landlock holds: a Landlock domain changes no mount)", onlyBackend: "native",
		weaken: "cap-drop", holds: true, rootOnly: true, catchers: []string{"undo-umount-mask", "undo-remount-rw"}},
	{name: "cap-drop+landlock", step: "--cap-drop ALL and Landlock", onlyBackend: "native",
		weaken: "cap-drop,landlock", rootOnly: true, catchers: []string{"undo-umount-mask", "undo-remount-rw"}},
	{name: "protect-home-agents", step: "agents' configurations under a writable HOME read-only (workspace.Compose)", hooks: func() { testhook.SkipProtectHomeAgents = true },
		catchers: []string{"runs-next-home-agent-configs"}},
	{name: "protect-host-caches", step: "the host's package and build caches read-only where a policy would let a sandbox write them (workspace.Compose)", hooks: func() { testhook.SkipProtectHostCaches = true },
		catchers: []string{"autoexec-host-caches"}},
	{name: "nested-configs", step: "agents' and editors' configuration found by the scan in every directory it reads (policy.scanGit)",
		hooks: func() { testhook.NoNestedConfigs = true }, onlyCatchers: true,
		catchers: []string{"later-nested-agent-configs"}},
}

// TestMutations re-executes this test binary once per mutation (and once
// unmutated, which must pass everything), each child with a fresh pty as
// its controlling terminal so the tty cases apply in-process.
func TestMutations(t *testing.T) {
	testenv.RequireBwrap(t)
	mutationCheck(t, "bwrap")
}

// TestMutationsNative is the same check through the native backend: each
// step removed from what its init does (internal/testhook.NativeWeaken).
func TestMutationsNative(t *testing.T) {
	testenv.RequireNative(t)
	mutationCheck(t, "native")
}

func mutationCheck(t *testing.T, backend string) {
	helper := cordonBinary(t)
	run := func(t *testing.T, name string, unpriv bool, env ...string) *Report {
		t.Helper()
		pty, err := OpenPty()
		require.NoError(t, err)
		defer pty.Close()
		out := filepath.Join(t.TempDir(), "report.json")
		// Each mutant gets a TMPDIR and a cordon state directory of its
		// own: a weakened sandbox may damage cordon's state (a writable
		// mask), which must not leak into the unmutated run or later runs.
		// The state directory's parent holds nothing else, as a home's
		// .local/state would (a case makes that parent writable).
		// Short: fixtures put Unix sockets in it (108 bytes at most).
		tmp, err := os.MkdirTemp("", "cm")
		require.NoError(t, err)
		t.Cleanup(func() { exec.Command("rm", "-rf", tmp).Run() })
		require.NoError(t, os.Chmod(tmp, 0o1777))
		cmd := testenv.Subprocess(t, "TestHelperMutant", name)
		cmd.Env = append(cmd.Env, envBackend+"="+backend, envHelper+"="+helper, envOut+"="+out,
			EnvCtty+"="+pty.Slave.Name(), EnvCttyMaster+"=3", "TMPDIR="+tmp, state.EnvDir+"="+filepath.Join(tmp, "st", "cordon"))
		cmd.Env = append(cmd.Env, env...)
		cmd.Stdin = pty.Slave
		cmd.ExtraFiles = []*os.File{pty.Master}
		var logb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logb, &logb
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if unpriv {
			// A copy of this test binary the user can run, and a report
			// it can write, in the mutant's own TMPDIR.
			u, err := Unprivileged()
			testenv.Need(t, "an unprivileged user to run the "+name+" mutant as", err)
			bin, err := copyExecutable(os.Args[0], tmp)
			require.NoError(t, err)
			cmd.Path, cmd.Args[0] = bin, bin
			out = filepath.Join(tmp, "report.json")
			cmd.Env = append(cmd.Env, envOut+"="+out, "HOME="+tmp)
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.Uid), Gid: uint32(u.Gid), Groups: []uint32{}}
		}
		require.NoError(t, cmd.Run(), "mutant %s: %s", name, logb.String())
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		var rep Report
		require.NoError(t, json.Unmarshal(b, &rep))
		return &rep
	}
	failed := func(rep *Report) []string {
		var f []string
		for _, r := range rep.Results {
			if r.Outcome == Fail {
				f = append(f, r.Case)
			}
		}
		return f
	}

	ms := backendMutations(backend)
	// Unmutated, the catchers of this backend's mutations must pass (else
	// a mutation would be "caught" by a case that fails anyway), and the
	// cases below must apply in-process. Only those run: the whole
	// catalogue already passes through 'cordon run' (TestCatalogue,
	// TestCatalogueNative), whose launcher is the same code, and a third
	// whole run here cost about a third of the suite's time.
	// CORDON_MUTATION_MAP=1 runs the whole catalogue unmutated too.
	mustApply := []string{"tty-tiocsti", "tty-controlling-terminal", "fd-inherited-file", "tty-interactive-modes", "tty-interactive-keystrokes-after-exit"}
	var noneEnv []string
	if os.Getenv(envMap) != "1" {
		names := slices.Clone(mustApply)
		for _, m := range ms {
			names = append(names, m.catchers...)
		}
		slices.Sort(names)
		noneEnv = []string{"CORDON_MUTANT_CASES=^(" + strings.Join(slices.Compact(names), "|") + ")$"}
	}
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		rep := run(t, "none", false, noneEnv...)
		for _, r := range rep.Results {
			if r.Outcome == Fail {
				t.Errorf("unmutated, in-process: %s failed:\n%s", r.Case, r.Detail)
			}
		}
		for _, m := range ms {
			for _, c := range m.catchers {
				if !slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Case == c }) {
					t.Errorf("mutation %s: its catcher %s is not in the catalogue", m.name, c)
				}
			}
		}
		for _, c := range mustApply {
			for _, r := range rep.Results {
				if r.Case == c && r.Outcome != Pass {
					t.Errorf("unmutated, in-process: %s is %s (%s); the mutation check needs it to apply", c, r.Outcome, r.Detail)
				}
			}
		}
	})
	for _, m := range ms {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			if m.rootOnly && os.Getuid() != 0 {
				// Not a missing feature: bwrap drops every capability of an
				// unprivileged launcher by itself, so there is nothing for
				// this mutation to remove. CI, as root, runs it.
				testenv.NotApplicable(t, "only a root launcher keeps capabilities for "+m.step+" to drop")
			}
			rep := run(t, m.name, m.unprivileged && os.Getuid() == 0)
			f := failed(rep)
			t.Logf("without %s, failing cases: %s", m.step, strings.Join(f, ", "))
			if m.holds {
				for _, c := range m.catchers {
					passed := false
					for _, r := range rep.Results {
						passed = passed || (r.Case == c && r.Outcome == Pass)
					}
					if !passed {
						t.Errorf("without %s, %s did not pass: the other wall does not hold (failing: %v)", m.step, c, f)
					}
				}
				return
			}
			caught := false
			for _, c := range m.catchers {
				caught = caught || slices.Contains(f, c)
			}
			if !caught {
				t.Errorf("without %s, none of %v failed: the step is not shown to be load-bearing (failing: %v)", m.step, m.catchers, f)
			}
		})
	}
}

// backendMutations are the mutations the check runs through backend.
func backendMutations(backend string) []mutation {
	var ms []mutation
	for _, m := range mutations {
		if m.onlyBackend != "" {
			if m.onlyBackend != backend {
				continue
			}
		} else if backend != "bwrap" && !m.perBackend() {
			// It switches off code every backend shares (policy
			// composition, the runner's file tools,
			// the audit log, the terminal relay): TestMutations shows it.
			continue
		}
		ms = append(ms, m)
	}
	return ms
}

// perBackend reports whether m removes a step each backend takes on its
// own: a sandbox mechanism (a bwrap option and its native counterpart,
// the descriptors, the seccomp filter, the state directory's mount, the
// identity check of what is mounted).
func (m mutation) perBackend() bool {
	if m.name == "net-netns" {
		return false // drops a bwrap option; the native init has no such switch
	}
	return m.args != nil || m.closeFds || m.seccomp || m.filter != nil || m.state || m.name == "identity-check"
}

// TestHelperMutant is a child of TestMutations: it runs the catalogue
// in-process through the launcher API, as this user, under the mutation
// it is given.
func TestHelperMutant(t *testing.T) {
	name := testenv.InSubprocess(t)
	if code := mutantMain(name); code != 0 {
		t.Fatalf("mutant %s: exit status %d", name, code)
	}
}

// mutantMain runs the catalogue under the mutation name ("none": none)
// and writes the report to $CORDON_MUTANT_OUT; it returns an exit status.
func mutantMain(name string) int {
	var m *mutation
	for i := range mutations {
		if mutations[i].name == name {
			m = &mutations[i]
		}
	}
	if m == nil && name != "none" {
		fmt.Fprintf(os.Stderr, "unknown mutation %q\n", name)
		return 2
	}
	backend := os.Getenv(envBackend)
	if m != nil && backend == "native" {
		testhook.NativeWeaken = m.name
		if m.weaken != "" {
			testhook.NativeWeaken = m.weaken
		}
	}
	if m != nil {
		testhook.BwrapArgs = m.args
		testhook.SkipCloseOnExec = m.closeFds
		testhook.SkipSeccomp = m.seccomp
		testhook.Seccomp = m.filter
		testhook.SkipStateDeny = m.state
		if m.hooks != nil {
			m.hooks()
		}
	}
	InstallLaunchHook()
	us := []User{Invoker()}
	base, err := os.MkdirTemp(FixtureParent(), "cordon-mutant-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(base)
	if _, err := Base(base, us, ""); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A mutant runs only its catchers: the check is that one of them
	// fails. CORDON_MUTATION_MAP=1 runs the whole catalogue under each
	// mutation instead (but those marked onlyCatchers), to see everything
	// a step's removal breaks (about 20 minutes more on two cores);
	// CORDON_MUTANT_CASES (a regexp) picks the cases by hand.
	sel := os.Getenv("CORDON_MUTANT_CASES")
	if m != nil && sel == "" && (os.Getenv(envMap) != "1" || m.onlyCatchers) {
		sel = "^(" + strings.Join(m.catchers, "|") + ")$"
	}
	cases, err := Filter(Catalogue(), sel)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workers := 4
	if m != nil && m.serial {
		workers = 1
	}
	rep, err := Run(context.Background(), Config{
		Executor: &Launcher{BackendName: backend, HelperPath: os.Getenv(envHelper)},
		Users:    us, BaseDir: base, Workers: workers, Cases: cases,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := json.Marshal(rep)
	if err := os.WriteFile(os.Getenv(envOut), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// dropProcCovers removes the read-only binds of /proc/sys and its kin onto
// themselves.
func dropProcCovers(args []string) []string {
	var out []group
	for _, g := range groups(args) {
		if g[0] == "--ro-bind" && len(g) == 3 && g[1] == g[2] && strings.HasPrefix(g[1], "/proc/") {
			continue
		}
		out = append(out, g)
	}
	return flatten(out)
}

// dropProcKeys removes the binds over /proc/keys and /proc/key-users.
func dropProcKeys(args []string) []string {
	var out []group
	for _, g := range groups(args) {
		if op, p := target(g); op != "" && strings.HasPrefix(p, "/proc/key") {
			continue
		}
		out = append(out, g)
	}
	return flatten(out)
}

// withoutRefusals is the filter without the named outright refusals.
func withoutRefusals(names ...string) func(bool) []byte {
	return func(network bool) []byte {
		r := bwrap.RulesFor(bwrap.SocketsFor(network))
		r.Refuse = slices.DeleteFunc(r.Refuse, func(rf bwrap.Refusal) bool { return slices.Contains(names, rf.Syscall) })
		return bwrap.Program(r)
	}
}

// socketDenylist is the filter as it was before the allowlists: every
// family and netlink protocol allowed but AF_UNIX with the network off.
func socketDenylist(network bool) []byte {
	var s bwrap.Sockets
	for f := uint32(0); f < 64; f++ {
		if f != unix.AF_UNIX || network {
			s.Families = append(s.Families, f)
		}
	}
	for p := uint32(0); p < 32; p++ {
		s.Netlink = append(s.Netlink, p)
	}
	return bwrap.Program(bwrap.Rules{Sockets: s, Refuse: bwrap.Refusals()})
}

// group is one bwrap option with its arguments; a --perms group carries
// the mount it applies to.
type group []string

var arity = map[string]int{
	"--bind": 2, "--ro-bind": 2, "--bind-fd": 2, "--ro-bind-fd": 2, "--dev-bind": 2, "--setenv": 2, "--symlink": 2,
	"--tmpfs": 1, "--proc": 1, "--dev": 1, "--remount-ro": 1, "--chdir": 1,
	"--cap-drop": 1, "--cap-add": 1, "--seccomp": 1, "--args": 1, "--uid": 1, "--gid": 1,
	"--hostname": 1, "--unsetenv": 1, "--dir": 1, "--chmod": 2,
}

func groups(args []string) []group {
	var gs []group
	for i := 0; i < len(args); {
		n := 1 + arity[args[i]]
		g := group(args[i:min(i+n, len(args))])
		if args[i] == "--perms" {
			n = 2
			g = group(args[i:min(i+2, len(args))])
		}
		if len(gs) > 0 && gs[len(gs)-1][0] == "--perms" && len(gs[len(gs)-1]) == 2 {
			gs[len(gs)-1] = append(append(group{}, gs[len(gs)-1]...), g...)
		} else {
			gs = append(gs, g)
		}
		i += n
	}
	return gs
}

func flatten(gs []group) []string {
	var a []string
	for _, g := range gs {
		a = append(a, g...)
	}
	return a
}

// target is the mount point of a mount group ("" for other options).
func target(g group) (string, string) {
	op := g[0]
	if op == "--perms" && len(g) > 2 {
		g = g[2:]
		op = g[0]
	}
	switch op {
	case "--bind", "--ro-bind":
		return op, g[2]
	case "--bind-fd": // a writable root bound from its descriptor
		return "--bind", g[2]
	case "--ro-bind-fd":
		return "--ro-bind", g[2]
	case "--tmpfs":
		return op, g[1]
	}
	return "", ""
}

// policyMount reports whether g is one of the policy's mounts (not /,
// /proc, /dev or /dev/shm).
func policyMount(g group) bool {
	op, p := target(g)
	return op != "" && p != "/" && p != "/dev/shm"
}

func dropFlag(flag string, n int) func([]string) []string {
	return func(args []string) []string {
		var out []group
		for _, g := range groups(args) {
			if g[0] == flag {
				if flag == "--perms" && len(g) > 2 {
					out = append(out, g[2:])
				}
				continue
			}
			out = append(out, g)
		}
		return flatten(out)
	}
}

// rewriteMasks replaces each "--ro-bind MASK D" that masks a denied
// directory (MASK under cordon's mask root) with what f returns.
func rewriteMasks(f func(src, dst string) []string) func([]string) []string {
	return func(args []string) []string {
		var out []group
		for _, g := range groups(args) {
			if g[0] == "--ro-bind" && len(g) == 3 && strings.Contains(g[1], "/masks/") {
				g = f(g[1], g[2])
			}
			out = append(out, g)
		}
		return flatten(out)
	}
}

// dropPins removes every --bind P P whose deepest mounted ancestor is
// writable: a pin (or a writable root inside a writable root, which adds
// nothing).
func dropPins(args []string) []string {
	gs := groups(args)
	var out []group
	var mounted []group
	for _, g := range gs {
		op, p := target(g)
		if op == "--bind" && p != "/" && policyMount(g) {
			best, bestOp := "", ""
			for _, m := range mounted {
				mop, mp := target(m)
				if (mp == "/" || strings.HasPrefix(p, mp+"/")) && len(mp) >= len(best) {
					best, bestOp = mp, mop
				}
			}
			if bestOp == "--bind" {
				continue
			}
		}
		if op != "" {
			mounted = append(mounted, g)
		}
		out = append(out, g)
	}
	return flatten(out)
}

// reverseMounts puts the policy's mounts deepest first.
func reverseMounts(args []string) []string {
	gs := groups(args)
	var idx []int
	for i, g := range gs {
		if policyMount(g) {
			idx = append(idx, i)
		}
	}
	ms := make([]group, len(idx))
	for k, i := range idx {
		ms[k] = gs[i]
	}
	slices.Reverse(ms)
	for k, i := range idx {
		gs[i] = ms[k]
	}
	return flatten(gs)
}

// TestMutators checks the argument rewriters on a rendered plan, so a
// mutation that silently stopped matching cannot make the check vacuous.
func TestMutators(t *testing.T) {
	args := strings.Fields(`--unshare-user --unshare-pid --disable-userns --new-session --cap-drop ALL --ro-bind / /
--proc /proc --dev /dev --tmpfs /dev/shm --bind /w /w --bind /w/a /w/a --perms 0111 --tmpfs /w/a/d
--ro-bind /w/a/ro /w/a/ro --ro-bind /x /x --bind /x/c /x/c --remount-ro /w/a/d --setenv CORDON_SANDBOX bwrap`)
	has := func(a []string, s string) bool { return strings.Contains(" "+strings.Join(a, " ")+" ", " "+s+" ") }
	p := dropPins(args)
	require.False(t, has(p, "--bind /w/a /w/a"), "pin kept: %v", p)
	require.True(t, has(p, "--bind /x/c /x/c"), "carve dropped: %v", p)
	require.True(t, has(p, "--bind /w /w"), "root dropped: %v", p)
	require.False(t, has(dropFlag("--cap-drop", 1)(args), "--cap-drop"))
	k := strings.Fields("--proc /proc --ro-bind /proc/sys /proc/sys --ro-bind /dev/null /proc/keys --ro-bind /dev/null /proc/key-users --dev /dev")
	require.Equal(t, strings.Fields("--proc /proc --ro-bind /proc/sys /proc/sys --dev /dev"), dropProcKeys(k))
	require.Equal(t, strings.Fields("--proc /proc --ro-bind /dev/null /proc/keys --ro-bind /dev/null /proc/key-users --dev /dev"), dropProcCovers(k))
	require.False(t, has(dropFlag("--remount-ro", 1)(args), "--remount-ro"))
	np := dropFlag("--perms", 1)(args)
	require.False(t, has(np, "--perms") || !has(np, "--tmpfs /w/a/d"), "%v", np)
	r := reverseMounts(args)
	require.True(t, strings.Index(strings.Join(r, " "), "/w/a/d") < strings.Index(strings.Join(r, " "), "--bind /w /w"), "%v", r)
	require.Equal(t, len(args), len(r))
}
