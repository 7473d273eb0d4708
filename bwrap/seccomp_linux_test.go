package bwrap

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSyscallNumbers checks the table of the architecture the test runs
// on against x/sys (generated from the kernel's headers).
func TestSyscallNumbers(t *testing.T) {
	want := map[string]uint32{
		"socket": unix.SYS_SOCKET, "socketpair": unix.SYS_SOCKETPAIR, "ioctl": unix.SYS_IOCTL,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER,
		"add_key":           unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "keyctl": unix.SYS_KEYCTL,
		"bpf": unix.SYS_BPF, "userfaultfd": unix.SYS_USERFAULTFD, "syslog": unix.SYS_SYSLOG,
		"fchmod": unix.SYS_FCHMOD, "fchmodat": unix.SYS_FCHMODAT, "fchmodat2": 452,
		"openat": unix.SYS_OPENAT, "openat2": unix.SYS_OPENAT2, "mknodat": unix.SYS_MKNODAT,
		"fchown": unix.SYS_FCHOWN, "fchownat": unix.SYS_FCHOWNAT,
		"setxattr": unix.SYS_SETXATTR, "lsetxattr": unix.SYS_LSETXATTR, "fsetxattr": unix.SYS_FSETXATTR,
		"removexattr": unix.SYS_REMOVEXATTR, "lremovexattr": unix.SYS_LREMOVEXATTR,
		"fremovexattr": unix.SYS_FREMOVEXATTR, "utimensat": unix.SYS_UTIMENSAT,
		"setxattrat": unix.SYS_SETXATTRAT, "removexattrat": unix.SYS_REMOVEXATTRAT,
		"file_setattr": unix.SYS_FILE_SETATTR, "file_getattr": unix.SYS_FILE_GETATTR,
		"getxattr": unix.SYS_GETXATTR, "lgetxattr": unix.SYS_LGETXATTR, "fgetxattr": unix.SYS_FGETXATTR,
		"listxattr": unix.SYS_LISTXATTR, "llistxattr": unix.SYS_LLISTXATTR, "flistxattr": unix.SYS_FLISTXATTR,
		"getxattrat": unix.SYS_GETXATTRAT, "listxattrat": unix.SYS_LISTXATTRAT,
		"inotify_add_watch": unix.SYS_INOTIFY_ADD_WATCH, "fanotify_mark": unix.SYS_FANOTIFY_MARK,
		"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "unshare": unix.SYS_UNSHARE,
		"shmget": unix.SYS_SHMGET, "shmat": unix.SYS_SHMAT, "shmctl": unix.SYS_SHMCTL, "shmdt": unix.SYS_SHMDT,
		"msgget": unix.SYS_MSGGET, "msgsnd": unix.SYS_MSGSND, "msgrcv": unix.SYS_MSGRCV, "msgctl": unix.SYS_MSGCTL,
		"semget": unix.SYS_SEMGET, "semop": unix.SYS_SEMOP, "semtimedop": unix.SYS_SEMTIMEDOP, "semctl": unix.SYS_SEMCTL,
		"prlimit64": unix.SYS_PRLIMIT64, "setpriority": unix.SYS_SETPRIORITY, "ioprio_set": unix.SYS_IOPRIO_SET,
		"sched_setscheduler": unix.SYS_SCHED_SETSCHEDULER, "sched_setparam": unix.SYS_SCHED_SETPARAM,
		"sched_setaffinity": unix.SYS_SCHED_SETAFFINITY, "sched_setattr": unix.SYS_SCHED_SETATTR,
		"connect": unix.SYS_CONNECT, "listen": unix.SYS_LISTEN, "sendto": unix.SYS_SENDTO,
		"sendmsg": unix.SYS_SENDMSG, "sendmmsg": unix.SYS_SENDMMSG, "bind": unix.SYS_BIND,
		"mkdirat": unix.SYS_MKDIRAT, "unlinkat": unix.SYS_UNLINKAT, "symlinkat": unix.SYS_SYMLINKAT,
		"linkat": unix.SYS_LINKAT, "renameat": unix.SYS_RENAMEAT, "renameat2": unix.SYS_RENAMEAT2,
		"truncate": unix.SYS_TRUNCATE,
		"fcntl":    unix.SYS_FCNTL, "mq_open": unix.SYS_MQ_OPEN, "mq_unlink": unix.SYS_MQ_UNLINK,
		"mq_timedsend": unix.SYS_MQ_TIMEDSEND, "mq_timedreceive": unix.SYS_MQ_TIMEDRECEIVE,
		"mq_notify": unix.SYS_MQ_NOTIFY, "mq_getsetattr": unix.SYS_MQ_GETSETATTR,
		"statmount": unix.SYS_STATMOUNT, "listmount": unix.SYS_LISTMOUNT,
	}
	if runtime.GOARCH == "amd64" {
		// The calls aarch64 has only the *at forms of.
		for n, nr := range map[string]uint32{"chmod": 90, "open": 2, "creat": 85, "mknod": 133,
			"chown": 92, "lchown": 94, "utime": 132, "utimes": 235, "futimesat": 261,
			"mkdir": 83, "unlink": 87, "rmdir": 84, "rename": 82, "link": 86, "symlink": 88} {
			want[n] = nr
		}
	}
	name := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	for _, ar := range archs {
		if ar.name == name {
			require.Equal(t, want, ar.nr)
			return
		}
	}
	// testenv.NotApplicable's words, without importing it: testenv
	// imports detect, which imports the backends built on this package.
	t.Skipf("not applicable: the filter has no table for %s (it refuses every call there)", runtime.GOARCH)
}
