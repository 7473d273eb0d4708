package launcher

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/native"
	"github.com/cordon-sandbox/cordon/netpolicy"
	"github.com/cordon-sandbox/cordon/policy"
)

// landlockInitArg is argv[1] of the landlock backend's init (cordon
// started again as /proc/self/exe, its spec on a descriptor).
const landlockInitArg = "__cordon-landlock"

// landlockABI is the Landlock ABI this process may use, 0 where there is
// none; a variable so tests can render for a given ABI.
var landlockABI = native.LandlockABI

// LandlockPlan renders policy p for the landlock backend as a launch from
// here would ('cordon explain --backend landlock'): cordon's state
// directory denied, the host's directories listed now.
func LandlockPlan(p policy.FsSandboxPolicy) (*landlock.Plan, error) {
	canon, err := canonicalize(p, nil)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return landlockPlan(canon)
}

func landlockPlan(canon *policy.Canonical) (*landlock.Plan, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("backend landlock: Landlock is Linux's; on %s use seatbelt", runtime.GOOS)
	}
	opt := landlock.DefaultOptions()
	// The private TMPDIR and cache are made at launch, before the plan is
	// applied: render them as there already.
	for _, sub := range []string{state.Tmp, state.Cache} {
		parent, err := policy.Resolve(filepath.Join(state.Path(), sub))
		if err != nil {
			continue
		}
		for _, r := range canon.Roots() {
			if exists, _ := canon.Stat(r.Path); !exists && filepath.Dir(r.Path) == parent && canon.Access(r.Path, policy.Write) {
				opt.Made = append(opt.Made, r.Path)
			}
		}
	}
	return landlock.Render(canon, landlockABI(), landlock.OSLister{}, opt)
}

// renderLandlock fills out with the landlock init's argv, its command and
// the plan's rules and differences from the model.
func renderLandlock(out *Rendered, canon *policy.Canonical, network bool, np *netpolicy.Policy, cmd []string) (*Rendered, error) {
	if np != nil {
		out.Network = &RenderedNet{AllowDomains: np.AllowText(), DenyDomains: append([]string{}, np.DenyText()...),
			Proxy:       "http://cordon:CREDENTIAL@127.0.0.1:PORT",
			Enforcement: landlockNetEnforcement}
	}
	pl, err := landlockPlan(canon)
	if err != nil {
		return nil, err
	}
	exe, err := selfExe()
	if err != nil {
		exe = "CORDON (" + err.Error() + ")"
	}
	out.Argv = []string{exe, landlockInitArg, strconv.Itoa(3)}
	out.Command = cmd
	out.Landlock = "the only wall on the file system (no mounts, no namespaces)"
	out.LandlockRules = pl.Describe()
	out.LandlockPlan = pl
	// As a launch installs it: the metadata calls go to the launcher,
	// which decides them by the plan (landlock.Plan.MayChangeMeta).
	rules := landlockGatedRules(network, np != nil, !network, pl.ABI)
	out.Seccomp = bwrap.Describe(rules)
	return out, nil
}

// landlockGatedRules are the seccomp rules of a landlock sandbox with
// the gate: the metadata and entry gates (gate.Rules, gate.EntryRules);
// with an allowlist, or with the network off where Landlock has TCP
// rights (ABI 4) to hold the loopback as a second wall (loopbackHeld),
// TCP sockets whose bind, listen and connect the gate decides
// (gate.ConnectRules: the proxy, and the sandbox's own listeners on the
// loopback); with unixGated (the network off, or a host socket handed
// over: hostSockets.unixGated), Unix sockets (gate.UnixRules).
func landlockGatedRules(network, proxy, unixGated bool, abi int) bwrap.Rules {
	r := landlockRules(network)
	tcp := proxy || loopbackHeld(network, abi)
	if tcp {
		r = landlockProxyRules()
	}
	if tcp && !proxy {
		r.Sockets.Mode = "network off, no network namespace: TCP on the loopback, to the sandbox's own listeners, through the gate"
	}
	r = gate.EntryRules(gate.Rules(r))
	if tcp {
		r = gate.ConnectRules(r) // after Rules, which replaces Notify
	}
	if unixGated {
		r = gate.UnixRules(r)
	}
	return r
}

// loopbackHeld says whether a landlock sandbox with the network off
// serves on the host's loopback: where Landlock handles TCP (ABI 4), so
// that a bind or connect the gate did not make reaches nothing (the
// sandbox itself may bind no port and connect only to the proxy's);
// before it, with the gate as the only wall, TCP sockets stay refused.
func loopbackHeld(network bool, abi int) bool { return !network && abi >= 4 }

// landlockRules are the seccomp rules of a landlock sandbox, which has no
// namespace of its own: with the network on the host's network's sockets
// but AF_UNIX (Landlock does not check connecting to a socket file, so
// every socket of the host would be reachable, a denied root's too);
// with it off no AF_INET or AF_INET6, and AF_UNIX stream sockets only
// with the gate, which lets them reach only the sandbox's own
// (gate.UnixRules); no Unix datagram socket in any mode; never a new user
// namespace, which would give the command every capability inside it and
// a mount namespace to undo the view with; no System V IPC (the host's
// segments, queues and semaphores); no change to another process's
// limits, priority or scheduling (the host's processes of the same user);
// no POSIX message queue (the host's) and no listmount or statmount (the
// user's other mount namespaces, a native sandbox's binds);
// no open with access mode 3, which Landlock lets through on a denied file
// (its extended attributes by fgetxattr, its inode flags by ioctl); no
// btrfs subvolume made, snapshotted or removed.
func landlockRules(network bool) bwrap.Rules {
	s := bwrap.SocketsNoNamespace()
	if network {
		s = bwrap.SocketsHostNoUnix()
	}
	// No Unix datagram socket in any mode, socketpair's included: one
	// sends to whatever socket file its address names.
	s.UnixStreamOnly = true
	r := bwrap.RulesFor(s)
	r.Refuse = append(r.Refuse, bwrap.SysVIPCRefusals()...)
	r.Refuse = append(r.Refuse, bwrap.PosixMQRefusals()...)
	r.Refuse = append(r.Refuse, bwrap.MountListRefusals()...)
	r.NoUserns = true
	r.SelfOnly = true
	r.NoAccessOpens = true
	r.RefuseIoctls = append(r.RefuseIoctls, btrfsSubvolumeIoctls...)
	r.RefuseIoctls = append(r.RefuseIoctls, lastingInodeIoctls...)
	return r
}

// landlockProxyRules are landlockRules with a network allowlist: the
// sandbox is on the host's network, so only TCP sockets are made
// (bwrap.SocketsTCPNoNamespace), and with the metadata gate each
// connect goes to the launcher (gate.ConnectRules), which connects
// it to the proxy only.
func landlockProxyRules() bwrap.Rules {
	r := landlockRules(false)
	r.Sockets = bwrap.SocketsTCPNoNamespace()
	r.Sockets.UnixStreamOnly = true
	return r
}

// landlockNetEnforcement is how the landlock backend keeps a sandbox to
// its proxy.
const landlockNetEnforcement = "no network namespace: cordon's proxy listens on a free port of the host's loopback behind a per-launch credential; " +
	"the seccomp filter lets the sandbox make TCP sockets only (no UDP or raw sockets, no TCP Fast Open; Unix stream sockets reach only the sandbox's own) and hands every bind, listen and connect to cordon, " +
	"which takes the socket and connects it itself, from its own copy of the address, when that address is the proxy's or one of the sandbox's own listeners, and refuses every other (EACCES); " +
	"a listener is bound on the loopback only, at a port the kernel picks; " +
	"Landlock's TCP connect right admits only the proxy's port and no bind, as a second wall (ABI 4)"

// lastingInodeIoctls change a file or directory for good on a descriptor
// a read opens, checked by ownership or the mode's bits alone, which
// Landlock's ioctl right (device files only) does not cover:
// FS_IOC_ENABLE_VERITY makes a file the user owns read-only forever
// (~/.bashrc, a repository's .git/config, on btrfs, f2fs or ext4 with
// verity); FS_IOC_SET_ENCRYPTION_POLICY encrypts an empty directory's
// future entries with a key the sandbox chose; FS_IOC_ADD_ENCRYPTION_KEY
// and FS_IOC_REMOVE_ENCRYPTION_KEY plant a key in, or take the user's own
// out of, the file system's keyring (the kernel keyrings are refused
// already), locking the user's unlocked encrypted directories. Refused
// with ENOTTY, what a file system without them answers. (linux/fs.h,
// linux/fscrypt.h, linux/fsverity.h; the same on x86_64 and aarch64.)
var lastingInodeIoctls = []uint32{
	0x40806685, // FS_IOC_ENABLE_VERITY
	0x800c6613, // FS_IOC_SET_ENCRYPTION_POLICY
	0xc0506617, // FS_IOC_ADD_ENCRYPTION_KEY
	0xc0406618, // FS_IOC_REMOVE_ENCRYPTION_KEY
	// FS_IOC_SETVERSION and ext4's own number for it rewrite the inode's
	// generation (what NFS file handles carry) and its ctime, checked by
	// ownership alone on any descriptor: native and bwrap answer EROFS
	// outside the writable roots, Landlock nothing. Both sizes of the
	// argument are native calls on 64-bit kernels.
	0x40087602, // FS_IOC_SETVERSION
	0x40047602, // FS_IOC32_SETVERSION
	0x40086604, // EXT4_IOC_SETVERSION
	0x40046604, // EXT4_IOC32_SETVERSION
	// EXT4_IOC_MIGRATE converts a file the user owns between block maps
	// and extents, checked the same way: it changes the inode's flags
	// and blocks through a read-only descriptor.
	0x00006609, // EXT4_IOC_MIGRATE
	// BTRFS_IOC_SET_RECEIVED_SUBVOL (and its 32-bit layout) rewrites a
	// subvolume's received UUID and times, by ownership alone: a later
	// btrfs receive of the user's then applies to the wrong base.
	0xc0c89425, // BTRFS_IOC_SET_RECEIVED_SUBVOL
	0xc0c09425, // BTRFS_IOC_SET_RECEIVED_SUBVOL_32
}

// btrfsSubvolumeIoctls make, snapshot, remove or freeze a btrfs
// subvolume (linux/btrfs.h; the same numbers on x86_64 and aarch64). The
// kernel checks them by the mode's bits alone, on a descriptor a read
// opens, and Landlock not at all (no path hook is called, and its ioctl
// right covers device files only): a sandbox made a directory, and with a
// snapshot of a subvolume it filled in its workspace a whole tree, in any
// directory of its user it may list, outside its writable roots
// (~/.config/systemd/user, a workspace's absent .claude). Refused with
// ENOTTY, what another file system answers.
var btrfsSubvolumeIoctls = []uint32{
	0x50009401, // BTRFS_IOC_SNAP_CREATE
	0x5000940e, // BTRFS_IOC_SUBVOL_CREATE
	0x5000940f, // BTRFS_IOC_SNAP_DESTROY
	0x50009417, // BTRFS_IOC_SNAP_CREATE_V2
	0x50009418, // BTRFS_IOC_SUBVOL_CREATE_V2
	0x4008941a, // BTRFS_IOC_SUBVOL_SETFLAGS
	0x5000943f, // BTRFS_IOC_SNAP_DESTROY_V2
}
