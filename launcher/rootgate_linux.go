package launcher

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/memfd"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// rootedCalls are the calls the native and bwrap backends' filter hands
// to the entry gate: those that make a name (the opens only with O_CREAT
// or O_TMPFILE). Removing, truncating and writing stay the kernel's:
// the mounts decide them, and an existing protected path keeps its
// read-only bind.
var rootedCalls = []string{
	"open", "openat", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
}

// gated says whether a native or bwrap launch has the entry gate: always
// but under the conformance suite's mutations that replace or drop the
// filter. On native its own calls run on a thread confined by the
// sandbox's Landlock ruleset (walledEntries), so a create outside the
// writable roots meets both walls, as the sandbox's own does.
func gated() bool {
	return !testhook.SkipSeccomp && testhook.Seccomp == nil && !testhook.NoEntryGate
}

// rootedRules returns r with the calls that make names handed to the
// gate, and, when unixGated (hostSockets.unixGated: the network off or an
// allowlist, the sandbox's own network namespace; or a host socket
// handed over), Unix sockets (gate.RootedUnixRules): every connect then
// goes to the gate, which performs it. With the network on and no socket
// handed over no AF_UNIX socket is made: the host's network namespace
// is the host's abstract sockets.
func rootedRules(r bwrap.Rules, unixGated bool) bwrap.Rules {
	r.Notify = append(slices.Clone(r.Notify), rootedCalls...)
	if unixGated {
		r = gate.RootedUnixRules(r)
	}
	return r
}

// outerRules is bwrap's own filter beneath the gate's: the sockets the
// gate's filter allows (the inner filter decides, the outer must not
// refuse them first), and NETLINK_SOCK_DIAG, which the gate's helper
// makes and sends out before its filter refuses it to the command.
func outerRules(r bwrap.Rules, unixGated bool) bwrap.Rules {
	r.Sockets = rootedRules(r, unixGated).Sockets
	r.Sockets.Netlink = append(slices.Clone(r.Sockets.Netlink), unix.NETLINK_SOCK_DIAG)
	return r
}

// rootedEntries decides the entry gate's calls for a sandbox with a
// mount namespace of its own (native, bwrap): the mounts are the
// kernel's wall on what may be written, and the gate keeps only the
// names the model protects that do not exist yet (docs/design.md, "The
// entry gate"), so no empty directory of cordon's need stand in the
// user's project for them. It resolves in the sandbox's own root
// (gate.Rooted) and never lets the kernel continue a call.
type rootedEntries struct {
	hostSockets // handed over (Cmd.UnixSockets)
	canon       *policy.Canonical
	diag        int // the sandbox's NETLINK_SOCK_DIAG socket, sent with the listener; -1: none
}

// SockDiag is the sandbox's own socket diagnostics (gate.UnixDiag).
func (e rootedEntries) SockDiag() int { return e.diag }

// OwnRoot: paths are the sandbox's, beneath /proc/PID/root.
func (rootedEntries) OwnRoot() bool { return true }

// KernelAllows is false: no wall of the kernel checks a protected name
// the gate would let it make.
func (rootedEntries) KernelAllows(string, gate.Need) bool { return false }

// MayEntry refuses p where the model protects it: a root that is not
// writable carved out of a writable one (a protected name, a nested
// repository's hooks, a denied path in the workspace), what lies in it,
// or an ancestor of one. Elsewhere the mounts decide: the gate performs
// the call as the sandbox, and a read-only bind answers EROFS.
func (e rootedEntries) MayEntry(p string) bool {
	if r, ok := e.canon.DecidingRoot(p); ok && !e.canon.Access(r.Path, policy.Write) && r.Path != "/" &&
		e.canon.Access(parentPath(r.Path), policy.Write) {
		return false
	}
	return e.canon.WritableBeneath(p)
}

// MayCreate is MayEntry: a writable root that does not exist is a
// mount point the sandbox finds made.
func (e rootedEntries) MayCreate(p string, _ bool) bool { return e.MayEntry(p) }

// MayWrite is MayEntry for the file a hard link brings: a read-only
// bind is another mount, which a link cannot leave (EXDEV).
func (e rootedEntries) MayWrite(p string) bool { return e.MayEntry(p) }

// Private: none; /dev/shm is the sandbox's own tmpfs.
func (rootedEntries) Private(string) bool { return false }

// MayChange and MayRead are never asked: the filter sends no metadata
// call (gate.Calls) under native and bwrap.
func (rootedEntries) MayChange(string, bool) bool { return false }
func (rootedEntries) MayRead(string, bool) bool   { return false }

func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// walledEntries are rootedEntries with the native init's Landlock
// ruleset: the gate performs the calls it allows on a thread confined
// by it (gate.ThreadRestricter), so the sandbox's second wall holds
// behind the gate's own calls as behind the sandbox's.
type walledEntries struct {
	rootedEntries
	ruleset int
}

// RestrictThread confines the calling thread by the sandbox's ruleset.
func (e walledEntries) RestrictThread() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("entry gate: no_new_privs: %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(e.ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("entry gate: landlock: restrict a thread with the sandbox's ruleset: %w", errno)
	}
	return nil
}

// walled gives d what came with the listener (rest, which the caller
// closes when Serve ends): for rootedEntries the sandbox's socket
// diagnostics, then on native its Landlock ruleset.
func walled(d gate.Decider, rest []int) gate.Decider {
	r, ok := d.(rootedEntries)
	if !ok || len(rest) == 0 {
		return d
	}
	r.diag = rest[0]
	if len(rest) == 2 {
		return walledEntries{r, rest[1]}
	}
	return r
}

var (
	_ gate.ThreadRestricter = walledEntries{}
	_ gate.EntryDecider     = walledEntries{}
	_ gate.EntryDecider     = rootedEntries{}
	_ gate.Decider          = rootedEntries{}
	_ gate.Rooted           = rootedEntries{}
	_ gate.UnixDiag         = rootedEntries{}
	_ gate.HostSockets      = rootedEntries{}
	_ gate.HostSockets      = walledEntries{}
)

// gateExecArg is the bwrap backend's gate helper (argv[1]): bwrap's
// own --seccomp gives no listener, so this program, exec'd inside as
// the last step before the command, installs the gate's filter (above
// bwrap's), sends the listener out and execs the command: argv SOCK
// PROG PATH ARGS..., SOCK the socket to the launcher, PROG a
// sealed file with the program.
const gateExecArg = "__cordon-gate-exec"

// maxProgram bounds the program the helper reads (BPF_MAXINSNS, 4096
// instructions of 8 bytes).
const maxProgram = 4096 * 8

func init() {
	if len(os.Args) >= 5 && os.Args[1] == gateExecArg {
		os.Exit(gateExecMain(os.Args[2:]))
	}
}

func gateExecMain(a []string) int {
	fail := func(format string, v ...any) int {
		fmt.Fprintf(os.Stderr, "cordon: %s: %s\n", gateExecArg, fmt.Sprintf(format, v...))
		return 125
	}
	sock, err1 := strconv.Atoi(a[0])
	progFd, err2 := strconv.Atoi(a[1])
	if err1 != nil || err2 != nil {
		return fail("bad arguments %q", a[:2])
	}
	prog := make([]byte, maxProgram+1)
	n, err := unix.Pread(progFd, prog, 0)
	unix.Close(progFd)
	if err != nil || n > maxProgram {
		return fail("read the seccomp program: %v (%d bytes)", err, n)
	}
	// The filter is the thread's: the one that execs.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: %v", err)
	}
	// The socket diagnostics of the sandbox's network namespace, for
	// the gate's record of its own Unix sockets; made before the filter,
	// which refuses NETLINK_SOCK_DIAG.
	diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fail("socket diagnostics: %v", err)
	}
	l, err := gate.Install(prog[:n])
	if err != nil {
		return fail("entry gate (seccomp user notification, and no other supervisor around cordon): %v", err)
	}
	err = gate.SendFd(sock, l, diag)
	unix.Close(l)
	unix.Close(diag)
	unix.Close(sock)
	if err != nil {
		return fail("%v", err)
	}
	err = syscall.Exec(a[2], a[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", a[2], err)
	if err == syscall.ENOENT {
		return 127
	}
	return 126
}

// bwrapGate makes the bwrap backend's entry gate: its socket, the
// program in a sealed file, and argv behind the helper, which finds them
// at sockFD and progFD inside.
func (c *Cmd) bwrapGate(canon *policy.Canonical, plan *bwrap.Plan, argv []string, sockFD int) (*metaGate, *os.File, []string, error) {
	exe, err := selfHelper(canon)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("entry gate: cordon installs it inside the sandbox, but %v", err)
	}
	prog, err := memfd.Sealed("cordon-gate-seccomp", bwrap.Program(rootedRules(plan.Rules, c.hosts.unixGated())))
	if err != nil {
		return nil, nil, nil, err
	}
	mg, err := newMetaGate(rootedEntries{hostSockets: c.hosts, canon: canon, diag: -1})
	if err != nil {
		prog.Close()
		return nil, nil, nil, err
	}
	argv = append([]string{exe, gateExecArg, strconv.Itoa(sockFD), strconv.Itoa(sockFD + 1)}, argv...)
	return mg, prog, argv, nil
}

// unixGated says whether the sandbox's Unix sockets go through the gate:
// with the network off or an allowlist, and on the host's network when
// a socket is handed over (the user named it: AF_UNIX comes back, its
// connects decided by the gate).
func (h hostSockets) unixGated() bool { return !h.network || len(h.ids) > 0 }
