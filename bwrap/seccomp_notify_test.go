package bwrap

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgramsUnchangedWithoutNotify pins the programs bwrap and native
// load: Rules.Notify, left empty, must not change one byte of them.
// (Changed on purpose when refused AF_UNIX and AF_INET came to answer
// EACCES: the network on, which refuses neither, kept its bytes; when
// fcntl F_SETLEASE came to be refused on every backend; and when the
// network on came to refuse AF_UNIX too: its program is the network
// off's; and when every mode came to refuse socketpair's Unix datagram
// sockets, which send to any datagram socket a name reaches.)
func TestProgramsUnchangedWithoutNotify(t *testing.T) {
	for name, tt := range map[string]struct {
		s    Sockets
		want string
	}{
		"off":   {SocketsFor(false), "72e018fa288fdfc6b82c8cf816129c91fd0c0910263004f70da81f05d2fe9945"},
		"on":    {SocketsFor(true), "72e018fa288fdfc6b82c8cf816129c91fd0c0910263004f70da81f05d2fe9945"},
		"proxy": {SocketsProxy(), "72e018fa288fdfc6b82c8cf816129c91fd0c0910263004f70da81f05d2fe9945"},
	} {
		require.Equal(t, tt.want, fmt.Sprintf("%x", sha256.Sum256(Seccomp(tt.s))), name)
		require.Equal(t, Seccomp(tt.s), Program(Rules{Sockets: tt.s, Refuse: Refusals(), Notify: nil}), name)
	}
}

func TestSeccompNotify(t *testing.T) {
	x86, arm := uint32(auditArchX8664), uint32(auditArchAarch64)
	r := RulesFor(SocketsFor(false))
	r.Notify = []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
		"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
		"utime", "utimes", "futimesat", "utimensat"}
	r.RefuseIoctls = []uint32{0x40086602}
	prog := Program(r)
	tests := []struct {
		name string
		c    call
		want uint32
	}{
		{"x86 chmod 0644", call{x86, 90, 0, 0o644, 0}, retNotify},
		{"x86 chmod setuid still refused here", call{x86, 90, 0, 0o4755, 0}, denyPerm},
		{"x86 fchmodat 0755", call{x86, 268, 0, 0, 0o755}, retNotify},
		{"x86 fchmodat setgid", call{x86, 268, 0, 0, 0o2755}, denyPerm},
		{"x86 fchmod", call{x86, 91, 3, 0o600, 0}, retNotify},
		{"x86 fchmodat2", call{x86, 452, 0, 0, 0o600}, retNotify},
		{"x86 chown", call{x86, 92, 0, 0, 0}, retNotify},
		{"x86 lchown", call{x86, 94, 0, 0, 0}, retNotify},
		{"x86 fchownat", call{x86, 260, 0, 0, 0}, retNotify},
		{"x86 setxattr", call{x86, 188, 0, 0, 0}, retNotify},
		{"x86 fremovexattr", call{x86, 199, 0, 0, 0}, retNotify},
		{"x86 utime", call{x86, 132, 0, 0, 0}, retNotify},
		{"x86 utimensat", call{x86, 280, 0, 0, 0}, retNotify},
		{"x86 open O_CREAT 0644 stays allowed", call{x86, 2, 0, 0o100, 0o644}, allow},
		{"x86 read", call{x86, 0, 0, 0, 0}, allow},
		{"x86 getxattr", call{x86, 191, 0, 0, 0}, allow},
		{"x86 socket unix still refused", call{x86, 41, afUnix, 0, 0}, denyAcces},
		{"arm64 fchmodat 0644", call{arm, 53, 0, 0, 0o644}, retNotify},
		{"arm64 fchownat", call{arm, 54, 0, 0, 0}, retNotify},
		{"arm64 fchown", call{arm, 55, 0, 0, 0}, retNotify},
		{"arm64 setxattr", call{arm, 5, 0, 0, 0}, retNotify},
		{"arm64 lremovexattr", call{arm, 15, 0, 0, 0}, retNotify},
		{"arm64 utimensat", call{arm, 88, 0, 0, 0}, retNotify},
		{"arm64 read", call{arm, 63, 0, 0, 0}, allow},
		{"x86 FS_IOC_SETFLAGS", call{x86, 16, 3, 0x40086602, 0}, retErrno | enotty},
		{"x86 FS_IOC_GETFLAGS", call{x86, 16, 3, 0x80086601, 0}, allow},
		{"x86 TIOCSTI still refused", call{x86, 16, 0, tiocsti, 0}, denyPerm},
		{"arm64 FS_IOC_SETFLAGS", call{arm, 29, 3, 0x40086602, 0}, retErrno | enotty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, run(t, prog, tt.c))
		})
	}
	require.Panics(t, func() { Program(Rules{Notify: []string{"chmodd"}}) })
}

// TestSeccompNoNamespaceRules: the landlock backend's additions (System V
// IPC refused, other processes' limits, priority and scheduling
// refused, the host's network without Unix sockets) decide as intended,
// and the calls on the caller itself stay.
func TestSeccompNoNamespaceRules(t *testing.T) {
	x86, arm := uint32(auditArchX8664), uint32(auditArchAarch64)
	r := RulesFor(SocketsHostNoUnix())
	r.Refuse = append(r.Refuse, SysVIPCRefusals()...)
	r.NoUserns, r.SelfOnly, r.NoAccessOpens = true, true, true
	prog := Program(r)
	const ptr = 0x7ffd_1234_5678
	const accmode3, oPath, oCreat = 3, 0o10000000, 0o100
	tests := []struct {
		name string
		c    call
		want uint32
	}{
		{"x86 shmget", call{x86, 29, 4242, 0, 0}, denyNosys},
		{"x86 shmat", call{x86, 30, 3, 0, 0}, denyNosys},
		{"x86 msgrcv", call{x86, 70, 0, 0, 0}, denyNosys},
		{"x86 semtimedop", call{x86, 220, 0, 0, 0}, denyNosys},
		{"arm64 shmget", call{arm, 194, 0, 0, 0}, denyNosys},
		{"arm64 semop", call{arm, 193, 0, 0, 0}, denyNosys},
		{"x86 prlimit64 self set", call{x86, 302, 0, 7, ptr}, allow},
		{"x86 prlimit64 other set", call{x86, 302, 1234, 7, ptr}, denyPerm},
		{"x86 prlimit64 other set, pointer above 4 GiB only", call{x86, 302, 1234, 7, 1 << 32}, denyPerm},
		{"x86 prlimit64 other read", call{x86, 302, 1234, 7, 0}, allow},
		{"x86 setpriority self", call{x86, 141, 0, 0, 10}, allow},
		{"x86 setpriority other", call{x86, 141, 0, 1234, 19}, denyPerm},
		{"x86 setpriority own group", call{x86, 141, 1, 0, 19}, denyPerm},
		{"x86 setpriority own user", call{x86, 141, 2, 0, 19}, denyPerm},
		{"x86 ioprio_set self", call{x86, 251, 1, 0, 3 << 13}, allow},
		{"x86 ioprio_set other", call{x86, 251, 1, 1234, 3 << 13}, denyPerm},
		{"x86 ioprio_set own user", call{x86, 251, 3, 0, 3 << 13}, denyPerm},
		{"x86 sched_setaffinity self", call{x86, 203, 0, 8, ptr}, allow},
		{"x86 sched_setaffinity other", call{x86, 203, 1234, 8, ptr}, denyPerm},
		{"x86 sched_setscheduler other", call{x86, 144, 1234, 3, ptr}, denyPerm},
		{"x86 sched_setparam other", call{x86, 142, 1234, ptr, 0}, denyPerm},
		{"x86 sched_setattr other", call{x86, 314, 1234, ptr, 0}, denyPerm},
		{"x86 sched_setattr self", call{x86, 314, 0, ptr, 0}, allow},
		{"arm64 prlimit64 other set", call{arm, 261, 1234, 7, ptr}, denyPerm},
		{"arm64 setpriority other", call{arm, 140, 0, 1234, 19}, denyPerm},
		{"arm64 ioprio_set other", call{arm, 30, 1, 1234, 0}, denyPerm},
		{"arm64 sched_setaffinity other", call{arm, 122, 1234, 8, ptr}, denyPerm},
		{"arm64 sched_setaffinity self", call{arm, 122, 0, 8, ptr}, allow},
		{"x86 unix socket, network on", call{x86, 41, afUnix, 1, 0}, denyAcces},
		{"x86 inet socket, network on", call{x86, 41, afInet, 1, 0}, allow},
		{"x86 socketpair unix", call{x86, 53, afUnix, 1, 0}, allow},
		{"x86 clone newuser", call{x86, 56, cloneNewuser, 0, 0}, denyPerm},
		{"x86 TIOCSTI", call{x86, 16, 0, tiocsti, 0}, denyPerm},
		{"x86 getpriority", call{x86, 140, 0, 1234, 0}, allow},
		{"x86 open mode 3", call{x86, 2, ptr, accmode3, 0}, retErrno | eacces},
		{"x86 open mode 3 O_CLOEXEC", call{x86, 2, ptr, accmode3 | 0o2000000, 0}, retErrno | eacces},
		{"x86 openat mode 3", call{x86, 257, 0, ptr, accmode3}, retErrno | eacces},
		{"x86 openat mode 3 O_CREAT 0644", call{x86, 257, 0, ptr, accmode3 | oCreat}, retErrno | eacces},
		{"x86 openat mode 3 O_PATH", call{x86, 257, 0, ptr, accmode3 | oPath}, allow},
		{"x86 openat O_RDWR", call{x86, 257, 0, ptr, 2}, allow},
		{"x86 openat O_WRONLY", call{x86, 257, 0, ptr, 1}, allow},
		{"x86 openat O_RDONLY", call{x86, 257, 0, ptr, 0}, allow},
		{"x86 open O_RDWR", call{x86, 2, ptr, 2, 0}, allow},
		{"x86 creat", call{x86, 85, ptr, 0o644, 0}, allow},
		{"arm64 openat mode 3", call{arm, 56, 0, ptr, accmode3}, retErrno | eacces},
		{"arm64 openat O_RDWR", call{arm, 56, 0, ptr, 2}, allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, run(t, prog, tt.c))
		})
	}
}

// TestSeccompNotifyWriteOpens: with NotifyWriteOpens the opens that make
// or write a file go to the supervisor, reading opens and O_PATH stay
// the kernel's, and the refusals before them still come first.
func TestSeccompNotifyWriteOpens(t *testing.T) {
	x86, arm := uint32(auditArchX8664), uint32(auditArchAarch64)
	r := RulesFor(SocketsFor(false))
	r.NoAccessOpens, r.NotifyWriteOpens = true, true
	r.Notify = []string{"open", "openat", "creat", "mkdir", "mkdirat", "unlinkat", "renameat2", "truncate"}
	prog := Program(r)
	const oCreat, oTrunc, oPath = 0o100, 0o1000, 0o10000000
	tests := []struct {
		name string
		c    call
		want uint32
	}{
		{"x86 open read", call{x86, 2, 0, 0, 0}, allow},
		{"x86 open O_WRONLY", call{x86, 2, 0, 1, 0}, retNotify},
		{"x86 open O_RDWR", call{x86, 2, 0, 2, 0}, retNotify},
		{"x86 open O_TRUNC read", call{x86, 2, 0, oTrunc, 0}, retNotify},
		{"x86 open O_CREAT 0644", call{x86, 2, 0, oCreat, 0o644}, retNotify},
		{"x86 open O_CREAT setuid", call{x86, 2, 0, oCreat, 0o4755}, denyPerm},
		{"x86 open O_PATH", call{x86, 2, 0, oPath, 0}, allow},
		{"x86 open access mode 3", call{x86, 2, 0, 3, 0}, retErrno | eacces},
		{"x86 openat read", call{x86, 257, 0, 0, 0}, allow},
		{"x86 openat O_WRONLY|O_CREAT", call{x86, 257, 0, 0, oCreat | 1}, retNotify},
		{"x86 openat O_WRONLY", call{x86, 257, 0, 0, 1}, retNotify},
		{"x86 openat O_PATH", call{x86, 257, 0, 0, oPath}, allow},
		{"x86 creat", call{x86, 85, 0, 0o644, 0}, retNotify},
		{"x86 mkdir", call{x86, 83, 0, 0o755, 0}, retNotify},
		{"x86 unlinkat", call{x86, 263, 0, 0, 0}, retNotify},
		{"x86 renameat2", call{x86, 316, 0, 0, 0}, retNotify},
		{"x86 truncate", call{x86, 76, 0, 0, 0}, retNotify},
		{"x86 openat2 still refused", call{x86, 437, 0, 0, 0}, denyNosys},
		{"arm64 openat read", call{arm, 56, 0, 0, 0}, allow},
		{"arm64 mkdirat", call{arm, 34, 0, 0, 0}, retNotify},
		{"arm64 renameat2", call{arm, 276, 0, 0, 0}, retNotify},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, run(t, prog, tt.c))
		})
	}
}
