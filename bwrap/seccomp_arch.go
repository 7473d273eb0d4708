package bwrap

// AUDIT_ARCH_* (linux/audit.h) of the conventions the filter accepts.
const (
	auditArchX8664   = 0xc000003e
	auditArchAarch64 = 0xc00000b7
)

// arch is one system call convention the filter accepts.
type arch struct {
	name  string
	audit uint32
	x32   bool // refuse the x32 calls sharing this audit arch
	nr    map[string]uint32
}

var archs = []arch{
	{"x86_64", auditArchX8664, true, map[string]uint32{
		"socket": 41, "socketpair": 53, "ioctl": 16,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"add_key": 248, "request_key": 249, "keyctl": 250,
		"bpf": 321, "userfaultfd": 323, "syslog": 103,
		"chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
		"open": 2, "openat": 257, "creat": 85, "openat2": 437, "mknod": 133, "mknodat": 259,
		"chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
		"setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
		"removexattr": 197, "lremovexattr": 198, "fremovexattr": 199,
		"utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280,
		"setxattrat": 463, "removexattrat": 466, "file_setattr": 469, "file_getattr": 468,
		"getxattr": 191, "lgetxattr": 192, "fgetxattr": 193, "listxattr": 194, "llistxattr": 195, "flistxattr": 196,
		"getxattrat": 464, "listxattrat": 465, "inotify_add_watch": 254, "fanotify_mark": 301,
		"clone": 56, "clone3": 435, "unshare": 272,
		"shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
		"msgctl": 71, "semget": 64, "semop": 65, "semtimedop": 220, "semctl": 66,
		"prlimit64": 302, "setpriority": 141, "ioprio_set": 251, "sched_setscheduler": 144,
		"sched_setparam": 142, "sched_setaffinity": 203, "sched_setattr": 314,
		// The network allowlist without a namespace (Rules.NoFastOpen,
		// Rules.NoListen, package gate's connect).
		"connect": 42, "bind": 49, "listen": 50, "sendto": 44, "sendmsg": 46, "sendmmsg": 307,
		"mkdir": 83, "mkdirat": 258, "unlink": 87, "unlinkat": 263, "rmdir": 84, "rename": 82,
		"renameat": 264, "renameat2": 316, "link": 86, "linkat": 265, "symlink": 88, "symlinkat": 266, "truncate": 76,
		"fcntl": 72, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
		"mq_notify": 244, "mq_getsetattr": 245, "statmount": 457, "listmount": 458,
	}},
	{"aarch64", auditArchAarch64, false, map[string]uint32{
		"socket": 198, "socketpair": 199, "ioctl": 29,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"add_key": 217, "request_key": 218, "keyctl": 219,
		"bpf": 280, "userfaultfd": 282, "syslog": 116,
		"fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "openat": 56, "openat2": 437, "mknodat": 33,
		"fchownat": 54, "fchown": 55,
		"setxattr": 5, "lsetxattr": 6, "fsetxattr": 7,
		"removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
		"utimensat": 88, "setxattrat": 463, "removexattrat": 466, "file_setattr": 469, "file_getattr": 468,
		"getxattr": 8, "lgetxattr": 9, "fgetxattr": 10, "listxattr": 11, "llistxattr": 12, "flistxattr": 13,
		"getxattrat": 464, "listxattrat": 465, "inotify_add_watch": 27, "fanotify_mark": 263,
		"clone": 220, "clone3": 435, "unshare": 97,
		"shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "msgget": 186, "msgsnd": 189, "msgrcv": 188,
		"msgctl": 187, "semget": 190, "semop": 193, "semtimedop": 192, "semctl": 191,
		"prlimit64": 261, "setpriority": 140, "ioprio_set": 30, "sched_setscheduler": 119,
		"sched_setparam": 118, "sched_setaffinity": 122, "sched_setattr": 274,
		// The network allowlist without a namespace.
		"connect": 203, "bind": 200, "listen": 201, "sendto": 206, "sendmsg": 211, "sendmmsg": 269,
		"mkdirat": 34, "unlinkat": 35, "symlinkat": 36, "linkat": 37, "renameat": 38, "renameat2": 276, "truncate": 45,
		"fcntl": 25, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
		"mq_notify": 184, "mq_getsetattr": 185, "statmount": 457, "listmount": 458,
	}},
}
