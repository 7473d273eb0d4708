package bwrap

// Rules of the filter added for issue 39's landlock wall and read leases
// (docs/threat-model.md, "Walls"), kept apart from the socket rules.

// fcntl's commands (asm-generic/fcntl.h, linux/fcntl.h; the same on
// x86_64 and aarch64).
const (
	fSetlease = 1024 // F_SETLEASE
	einval    = 22
)

// Leases: fcntl(F_SETLEASE) is refused on every backend with EINVAL,
// what a kernel with fs.leases-enable = 0 answers (Samba and the like
// then go on without one). A read lease on any file the sandbox can
// read and its user owns makes every host open of it for writing (or
// truncation) wait up to fs.lease-break-time (45 s) for the sandbox to
// give it up, and tells the sandbox by SIGIO the moment the host opens
// it: a delay the sandbox imposes on the host, and a signal no mount
// keeps out, since the lease is on the host's inode. F_NOTIFY (dnotify)
// stays: it tells no more than inotify on a directory the sandbox may
// read (a directory descriptor needs read access; O_PATH answers EBADF)
// and holds nothing of the host's back.
func (a *asm) leases(l func(string) string, ret func(uint32)) {
	a.label(l("fcntl"))
	a.emit(insn{code: bpfLdWAbs, k: offArg1})
	a.emit(insn{code: bpfJeqK, k: fSetlease, jf: 1})
	ret(retErrno | einval)
	ret(retAllow)
}

// PosixMQRefusals refuse POSIX message queues with ENOSYS, what a kernel
// built without CONFIG_POSIX_MQUEUE answers. A sandbox without an IPC
// namespace of its own (landlock) needs it: the queues are the host's,
// Landlock checks only the open, and mq_unlink removes the user's (as
// root any user's) queues, mq_open(O_CREAT) fills the host-wide
// fs.mqueue.queues_max (256), and two sandboxes talk through queue
// names with their network off.
func PosixMQRefusals() []Refusal {
	var out []Refusal
	for _, n := range []string{"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"} {
		out = append(out, Refusal{n, enosys})
	}
	return out
}

// MountListRefusals refuse listmount and statmount (Linux 6.8) with
// ENOSYS, so tools fall back to /proc/self/mountinfo. A sandbox in the
// user's own user namespace (landlock) may name any mount namespace the
// user owns by its id, a concurrent native or bwrap sandbox's included,
// and read which host directories it binds where.
func MountListRefusals() []Refusal {
	return []Refusal{{"listmount", enosys}, {"statmount", enosys}}
}
