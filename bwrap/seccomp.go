package bwrap

import (
	"fmt"
	"slices"
	"strings"
)

// A seccomp filter closes what mounts and namespaces cannot
// (docs/threat-model.md, classes 8, 10 and 13).
//
// Sockets are an allowlist per network mode (Sockets): socket(2) may create
// only the families the mode needs, and AF_NETLINK only with the protocols
// listed; AF_UNIX and AF_INET, which every kernel has, fail with EACCES
// (refused, as a denied file is), anything else with EAFNOSUPPORT
// (EPROTONOSUPPORT for a netlink protocol), what a kernel without that
// family answers, so programs take their usual fallback (refusedEACCES). An allowlist also stops socket(2) from loading
// the module of a rarely used family, each of them kernel attack surface.
// With the network off, AF_UNIX is not on the list: a Unix socket file is
// reachable through a read-only mount (connect needs no write access), and
// docker.sock, an ssh-agent or the user's D-Bus session bus each run code
// outside the sandbox; socketpair(AF_UNIX) and pipes keep working. AF_VSOCK
// is refused in every mode: it is not confined by the network namespace and
// reaches the hypervisor host (and WSL's interop service) directly.
//
// Some system calls are refused outright (Refusals): io_uring, which can
// create and connect sockets without passing through socket(2); the kernel
// keyrings (add_key, keyctl, request_key), because the sandbox inherits
// the launcher's session keyring, could read its keys and plant keys the
// host sees afterwards, and request_key makes the kernel run
// /sbin/request-key on the host; bpf, userfaultfd and syslog, which no
// ordinary tool needs in a sandbox and which give kernel attack surface or
// read the host's kernel log. The ioctls TIOCSTI and TIOCLINUX, which push
// input into a terminal, are refused too, and so is a read lease
// (fcntl F_SETLEASE), with which a sandbox holds back the host's writes
// (seccomp_wall.go).
//
// The program is classic BPF over struct seccomp_data, for x86_64 and
// aarch64. Other system call conventions on those kernels (x32, i386
// compat) are refused outright, so they cannot be used to go around it.

// Seccomp return values (linux/seccomp.h) and the numbers the rules test.
const (
	retAllow  = 0x7fff0000
	retErrno  = 0x00050000
	retNotify = 0x7fc00000 // SECCOMP_RET_USER_NOTIF

	x32SyscallBit = 0x40000000

	cloneNewuser = 0x10000000

	tiocsti   = 0x5412
	tioclinux = 0x541c

	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits (little endian): the kernel reads an int
	offArg1 = 24
	offArg2 = 32
	offArg3 = 40

	prioProcess      = 0 // setpriority's which: PRIO_PROCESS
	ioprioWhoProcess = 1 // ioprio_set's which: IOPRIO_WHO_PROCESS

	// modeSetID are the mode bits a sandbox may not give a file: a
	// set-user-ID or set-group-ID program made inside (as root: a root
	// shell) runs with its owner's rights on the host, for any local user
	// who can reach it, once the sandbox is gone.
	modeSetID = 0o6000
)

// Errnos, the same on x86_64 and aarch64 (asm-generic/errno*.h).
const (
	eperm           = 1
	eacces          = 13
	enotty          = 25
	enosys          = 38
	eprotonosupport = 93
	eopnotsupp      = 95
	eafnosupport    = 97
)

// A Refusal is a system call the filter refuses outright, and the errno it
// answers.
type Refusal struct {
	Syscall string
	Errno   uint32
}

// Refusals are the system calls every sandbox is refused. Each answers
// what the kernel answers when the feature is off for the caller, so
// programs take the path they already have for it: ENOSYS for the keyrings
// (a kernel built without CONFIG_KEYS), EPERM for bpf, userfaultfd and
// syslog (their sysctls: unprivileged_bpf_disabled,
// unprivileged_userfaultfd, dmesg_restrict) and for io_uring
// (io_uring_disabled).
func Refusals() []Refusal {
	return []Refusal{
		{"io_uring_setup", eperm}, {"io_uring_enter", eperm}, {"io_uring_register", eperm},
		{"add_key", enosys}, {"keyctl", enosys}, {"request_key", enosys},
		{"bpf", eperm}, {"userfaultfd", eperm}, {"syslog", eperm},
	}
}

// SysVIPCRefusals refuse System V shared memory, message queues and
// semaphores with ENOSYS, what a kernel built without CONFIG_SYSVIPC
// answers. A sandbox without an IPC namespace of its own (landlock)
// needs them: its keys and ids are the host's, and neither Landlock nor
// file permissions stand between it and the segments, queues and
// semaphores of its user (of root, as root). x86_64 and aarch64 have no
// ipc(2) multiplexer; i386's is refused with every compat call.
func SysVIPCRefusals() []Refusal {
	var out []Refusal
	for _, n := range []string{"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
		"semget", "semop", "semtimedop", "semctl"} {
		out = append(out, Refusal{n, enosys})
	}
	return out
}

// selfOnly are the calls that change another process's limits, priority
// or scheduling when their target is not 0 (the caller): what
// Rules.SelfOnly restricts.
var selfOnly = []string{"prlimit64", "setpriority", "ioprio_set",
	"sched_setscheduler", "sched_setparam", "sched_setaffinity", "sched_setattr"}

// Rules are what a filter program decides.
type Rules struct {
	Sockets Sockets
	Refuse  []Refusal
	// Notify are system calls, by name, that the filter hands to a
	// supervisor outside the sandbox (SECCOMP_RET_USER_NOTIF) once its
	// other rules let them through; a name one architecture lacks is
	// skipped there. Only the landlock backend uses it (package
	// metagate): bwrap and native leave it empty, and their programs stay
	// what they were.
	Notify []string
	// RefuseIoctls are ioctl requests refused with ENOTTY, what a file
	// system without them answers (the landlock backend: the inode flags
	// an owner may set, such as nodump, which Landlock does not cover).
	RefuseIoctls []uint32
	// NoUserns refuses new user namespaces: clone and unshare with
	// CLONE_NEWUSER fail with EPERM (what a kernel with them disabled
	// answers), clone3, whose flags are behind a pointer the filter
	// cannot read, with ENOSYS (callers fall back to clone). A backend
	// without a user namespace of its own (landlock) needs it: a new one
	// would give the command every capability inside it.
	NoUserns bool
	// SelfOnly refuses (EPERM) changing the limits, priority or
	// scheduling of any process but the caller: prlimit64 with a pid and
	// a new limit, setpriority and ioprio_set but for the caller's own
	// process (which and who 0), sched_setscheduler, sched_setparam,
	// sched_setaffinity and sched_setattr with a pid. A backend without
	// a PID namespace of its own (landlock) needs it: the kernel checks
	// these by user id alone, and Landlock's ptrace scope, which stops
	// process_vm_readv, pidfd_getfd, kcmp, migrate_pages and the like,
	// does not cover them. A thread's own id counts as another process
	// (pthread_setaffinity_np and pthread_setschedparam fail).
	SelfOnly bool
	// NoAccessOpens refuses (EACCES) open and openat with access mode 3
	// (O_RDONLY|O_WRONLY|O_RDWR's unused value) but not O_PATH: the
	// kernel then asks read and write permission of the file's mode yet
	// gives a descriptor with neither, which Landlock's open check lets
	// through anywhere (it asks only for what the descriptor reads or
	// writes). A sandbox whose only guard on contents is Landlock (the
	// landlock backend) would get a descriptor on a denied file for
	// fgetxattr, flistxattr and the inode ioctls. openat2 is already
	// ENOSYS.
	NoAccessOpens bool
	// NoFastOpen refuses (EOPNOTSUPP, what a kernel with client TCP
	// Fast Open off answers, so clients fall back to connect) sendto,
	// sendmsg and sendmmsg with MSG_FASTOPEN, which connect a TCP socket
	// to the address they carry without a connect(2) a supervisor would
	// see.
	NoFastOpen bool
	// NotifyWriteOpens hands to the supervisor, besides the opens that
	// make a file (O_CREAT, O_TMPFILE: Notify naming open, openat or
	// creat), those that write or truncate one without making it (access
	// mode O_WRONLY or O_RDWR, or O_TRUNC); reading opens stay the
	// kernel's alone. The landlock backend's entry gate needs it: a file
	// made where Landlock froze the directory gets only that directory's
	// rights (package gate, EntryRules).
	NotifyWriteOpens bool
}

// RulesFor are the rules of a sandbox whose sockets follow s.
func RulesFor(s Sockets) Rules { return Rules{Sockets: s, Refuse: Refusals()} }

// modeCalls are the calls that give a file its mode, where the mode is
// and, for the opens, where the flags are (the mode counts only with
// O_CREAT or O_TMPFILE: without them it is whatever the caller left
// there): setuid and setgid bits in it are refused (EPERM).
var modeCalls = []modeCall{
	{"chmod", offArg1, 0}, {"fchmod", offArg1, 0}, {"fchmodat", offArg2, 0}, {"fchmodat2", offArg2, 0},
	{"open", offArg2, offArg1}, {"openat", offArg3, offArg2}, {"creat", offArg1, 0},
	{"mknod", offArg1, 0}, {"mknodat", offArg2, 0},
}

func isModeCall(name string) bool {
	return slices.ContainsFunc(modeCalls, func(mc modeCall) bool { return mc.name == name })
}

type modeCall struct {
	name        string
	mode, flags uint32 // flags 0: the call always makes the file
}

// openCreates are the open flags with which the mode argument is used:
// O_CREAT and O_TMPFILE's own bit (the same on x86_64 and aarch64).
const openCreates = 0o100 | 0o20000000

// The access mode's bits and O_PATH (the same on x86_64 and aarch64).
const (
	openWronly = 0o1
	openRdwr   = 0o2
	openTrunc  = 0o1000
	openPath   = 0o10000000
)

// Seccomp returns the filter program for a sandbox whose sockets follow
// s, in the binary form bwrap's --seccomp reads.
func Seccomp(s Sockets) []byte { return Program(RulesFor(s)) }

// Program returns the filter program deciding r. It panics on a system
// call it has no number for: the rules are the package's own.
func Program(r Rules) []byte {
	for _, n := range r.Notify {
		known := false
		for _, ar := range archs {
			_, ok := ar.nr[n]
			known = known || ok
		}
		if !known {
			panic("bwrap: seccomp: no number for " + n + " on any architecture")
		}
	}
	a := asm{p: make([]insn, 0, 128), labels: make(map[string]int, 16)}
	a.emit(insn{code: bpfLdWAbs, k: offArch})
	for _, ar := range archs {
		// jeq arch, then a 32-bit jump to its block: a block may be longer
		// than a conditional jump's 255.
		a.emit(insn{code: bpfJeqK, k: ar.audit, jf: 1})
		a.emit(insn{code: bpfJa, t: ar.name})
	}
	// Any other convention (i386 compat, unknown): refuse every call.
	a.emit(insn{code: bpfRetK, k: retErrno | eperm})
	for _, ar := range archs {
		a.arch(ar, r)
	}
	return a.assemble()
}

// arch emits one architecture's block; it ends in a return on every path.
// The blocks follow the jumps in dispatch, each ending in a return.
func (a *asm) arch(ar arch, r Rules) {
	l := func(s string) string { return ar.name + "." + s }
	ret := func(v uint32) { a.emit(insn{code: bpfRetK, k: v}) }
	a.dispatch(ar, r, l, ret)
	a.modes(ar, r, l, ret)
	if r.NoUserns {
		a.userns(l, ret)
	}
	if r.SelfOnly {
		a.selfOnly(l, ret)
	}
	a.leases(l, ret)
	a.ioctls(r, l, ret)
	a.answers(r, l, ret)
	a.socketpair(r.Sockets, l, ret)
	a.socket(r.Sockets, l, ret)
	if r.NoFastOpen {
		a.fastOpen(l, ret)
	}
	if slices.Contains(r.Sockets.Families, afNetlink) {
		a.netlink(r.Sockets, l, ret)
	}
}

// dispatch emits the head of an architecture's block: the calls refused
// outright, a jump to the block of each call decided by its arguments,
// the calls handed to the supervisor, and every other call allowed.
func (a *asm) dispatch(ar arch, r Rules, l func(string) string, ret func(uint32)) {
	nr := func(name string) uint32 {
		n, ok := ar.nr[name]
		if !ok {
			panic(fmt.Sprintf("bwrap: seccomp: no %s number for %s", ar.name, name))
		}
		return n
	}
	a.label(ar.name)
	a.emit(insn{code: bpfLdWAbs, k: offNr})
	if ar.x32 {
		a.emit(insn{code: bpfJgeK, k: x32SyscallBit, jf: 1})
		ret(retErrno | eperm)
	}
	for _, rf := range r.Refuse {
		a.emit(insn{code: bpfJeqK, k: nr(rf.Syscall), jf: 1})
		ret(retErrno | rf.Errno)
	}
	if r.NoUserns {
		a.emit(insn{code: bpfJeqK, k: nr("clone3"), jf: 1})
		ret(retErrno | enosys)
		// clone's and unshare's flags are both the first argument.
		a.emit(insn{code: bpfJeqK, k: nr("clone"), t: l("userns")})
		a.emit(insn{code: bpfJeqK, k: nr("unshare"), t: l("userns")})
	}
	if r.SelfOnly {
		for _, n := range selfOnly {
			a.emit(insn{code: bpfJeqK, k: nr(n), t: l("self" + n)})
		}
	}
	a.emit(insn{code: bpfJeqK, k: nr("ioctl"), t: l("ioctl")})
	a.emit(insn{code: bpfJeqK, k: nr("fcntl"), t: l("fcntl")})
	a.emit(insn{code: bpfJeqK, k: nr("socketpair"), t: l("socketpair")})
	a.emit(insn{code: bpfJeqK, k: nr("socket"), t: l("socket")})
	if r.NoFastOpen {
		a.emit(insn{code: bpfJeqK, k: nr("sendto"), t: l("fastopen3")})
		a.emit(insn{code: bpfJeqK, k: nr("sendmsg"), t: l("fastopen2")})
		a.emit(insn{code: bpfJeqK, k: nr("sendmmsg"), t: l("fastopen3")})
	}
	// openat2's mode is behind a pointer the filter cannot read: ENOSYS,
	// and callers fall back to openat.
	a.emit(insn{code: bpfJeqK, k: nr("openat2"), jf: 1})
	ret(retErrno | enosys)
	for _, mc := range modeCalls {
		if n, ok := ar.nr[mc.name]; ok {
			a.emit(insn{code: bpfJeqK, k: n, t: l("mode" + mc.name)})
		}
	}
	for _, name := range r.Notify {
		if n, ok := ar.nr[name]; ok && !isModeCall(name) {
			a.emit(insn{code: bpfJeqK, k: n, jf: 1})
			ret(retNotify)
		}
	}
	ret(retAllow)
}

// modes emits the blocks of modeCalls: set-ID bits refused, and the
// opens that make or write a file told from those that read.
func (a *asm) modes(ar arch, r Rules, l func(string) string, ret func(uint32)) {
	for _, mc := range modeCalls {
		if _, ok := ar.nr[mc.name]; ok {
			a.label(l("mode" + mc.name))
			if mc.flags != 0 && r.NoAccessOpens {
				// Access mode 3 without O_PATH: both low bits set.
				a.emit(insn{code: bpfLdWAbs, k: mc.flags})
				a.emit(insn{code: bpfJsetK, k: openPath, jt: 2})
				a.emit(insn{code: bpfJsetK, k: openWronly, jf: 1})
				a.emit(insn{code: bpfJsetK, k: openRdwr, t: l("eacces")})
			}
			if mc.flags != 0 {
				a.emit(insn{code: bpfLdWAbs, k: mc.flags})
				if r.NotifyWriteOpens && slices.Contains(r.Notify, mc.name) {
					a.emit(insn{code: bpfJsetK, k: openCreates, jt: 2})
					a.emit(insn{code: bpfJsetK, k: openWronly | openRdwr | openTrunc, t: l("notify")})
				} else {
					a.emit(insn{code: bpfJsetK, k: openCreates, jt: 1})
				}
				ret(retAllow)
			}
			a.emit(insn{code: bpfLdWAbs, k: mc.mode})
			a.emit(insn{code: bpfJsetK, k: modeSetID, t: l("eperm")})
			if slices.Contains(r.Notify, mc.name) {
				ret(retNotify) // a mode without set-ID bits: the supervisor decides
			} else {
				ret(retAllow)
			}
		}
	}
}

// userns emits the block of Rules.NoUserns for clone and unshare.
func (a *asm) userns(l func(string) string, ret func(uint32)) {
	a.label(l("userns"))
	a.emit(insn{code: bpfLdWAbs, k: offArg0})
	a.emit(insn{code: bpfJsetK, k: cloneNewuser, t: l("eperm")})
	ret(retAllow)
}

// ioctls emits ioctl's block: TIOCSTI and TIOCLINUX refused, and
// Rules.RefuseIoctls.
func (a *asm) ioctls(r Rules, l func(string) string, ret func(uint32)) {
	// ioctl(fd, TIOCSTI|TIOCLINUX, ...)
	a.label(l("ioctl"))
	a.emit(insn{code: bpfLdWAbs, k: offArg1})
	a.emit(insn{code: bpfJeqK, k: tiocsti, t: l("eperm")})
	a.emit(insn{code: bpfJeqK, k: tioclinux, t: l("eperm")})
	for _, req := range r.RefuseIoctls {
		a.emit(insn{code: bpfJeqK, k: req, t: l("enotty")})
	}
	ret(retAllow)
	if len(r.RefuseIoctls) > 0 {
		a.label(l("enotty"))
		ret(retErrno | enotty)
	}
}

// answers emits the answers the blocks share, each behind its label.
func (a *asm) answers(r Rules, l func(string) string, ret func(uint32)) {
	a.label(l("eperm"))
	ret(retErrno | eperm)
	if r.NotifyWriteOpens {
		a.label(l("notify"))
		ret(retNotify)
	}
	if r.NoAccessOpens {
		a.label(l("eacces"))
		ret(retErrno | eacces)
	}
}

// selfOnly emits the blocks of Rules.SelfOnly; each ends in a return.
// A pid or who is an int: its low 32 bits are what the kernel reads.
func (a *asm) selfOnly(l func(string) string, ret func(uint32)) {
	// prlimit64(pid, resource, new, old): reading another's limits
	// (new NULL, all 64 bits) stays, as /proc/PID/limits shows them.
	a.label(l("selfprlimit64"))
	a.emit(insn{code: bpfLdWAbs, k: offArg0})
	a.emit(insn{code: bpfJeqK, k: 0, t: l("selfallow")})
	a.emit(insn{code: bpfLdWAbs, k: offArg2})
	a.emit(insn{code: bpfJeqK, k: 0, f: l("eperm")})
	a.emit(insn{code: bpfLdWAbs, k: offArg2 + 4})
	a.emit(insn{code: bpfJeqK, k: 0, t: l("selfallow"), f: l("eperm")})
	// setpriority(which, who, prio) and ioprio_set(which, who, prio):
	// only the caller itself; a process group or a user (who 0 included:
	// the caller's) reaches processes outside.
	for _, c := range []struct {
		name  string
		which uint32
	}{{"setpriority", prioProcess}, {"ioprio_set", ioprioWhoProcess}} {
		a.label(l("self" + c.name))
		a.emit(insn{code: bpfLdWAbs, k: offArg0})
		a.emit(insn{code: bpfJeqK, k: c.which, f: l("eperm")})
		a.emit(insn{code: bpfLdWAbs, k: offArg1})
		a.emit(insn{code: bpfJeqK, k: 0, t: l("selfallow"), f: l("eperm")})
	}
	// sched_setscheduler, sched_setparam, sched_setaffinity,
	// sched_setattr: the pid is the first argument.
	for _, n := range selfOnly[3:] {
		a.label(l("self" + n))
		a.emit(insn{code: bpfLdWAbs, k: offArg0})
		a.emit(insn{code: bpfJeqK, k: 0, t: l("selfallow"), f: l("eperm")})
	}
	a.label(l("selfallow"))
	ret(retAllow)
}

// Describe is a one-line account of the filter for 'cordon profile'.
func Describe(r Rules) string {
	var refused []string
	for _, rf := range r.Refuse {
		refused = append(refused, rf.Syscall)
	}
	var fams []string
	for _, f := range r.Sockets.Families {
		n := familyNames[f]
		if n == "" {
			n = fmt.Sprintf("family %d", f)
		}
		if f == afNetlink {
			var ps []string
			for _, p := range r.Sockets.Netlink {
				pn := netlinkNames[p]
				if pn == "" {
					pn = fmt.Sprint(p)
				}
				ps = append(ps, pn)
			}
			n += " (" + strings.Join(ps, ", ") + ")"
		}
		fams = append(fams, n)
	}
	userns := ""
	if r.NoUserns {
		userns = ", new user namespaces (clone/unshare CLONE_NEWUSER, clone3)"
	}
	if r.SelfOnly {
		userns += ", changing another process's limits, priority or scheduling"
	}
	if r.NoAccessOpens {
		userns += ", opens with access mode 3"
	}
	if r.NoFastOpen {
		userns += ", TCP Fast Open (MSG_FASTOPEN)"
	}
	if r.Sockets.TCPOnly {
		userns += ", IPv4 and IPv6 sockets other than TCP"
	}
	if r.Sockets.UnixStreamOnly {
		userns += ", Unix datagram sockets"
	}
	if len(fams) == 0 {
		fams = []string{"none"}
	}
	d := fmt.Sprintf("seccomp: refuse %s, ioctl TIOCSTI/TIOCLINUX, fcntl F_SETLEASE%s, x32 and i386 calls; "+
		"sockets (%s) %s only, socketpair AF_UNIX only",
		strings.Join(refused, ", "), userns, r.Sockets.Mode, strings.Join(fams, ", "))
	if len(r.Notify) > 0 {
		d += "; decided by the launcher: " + strings.Join(r.Notify, ", ")
	}
	return d
}
