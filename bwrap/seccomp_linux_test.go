package bwrap

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
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
		"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "unshare": unix.SYS_UNSHARE,
	}
	if runtime.GOARCH == "amd64" {
		// The calls aarch64 has only the *at forms of.
		for n, nr := range map[string]uint32{"chmod": 90, "open": 2, "creat": 85, "mknod": 133} {
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
	testenv.NotApplicable(t, "the filter has no table for "+runtime.GOARCH+" (it refuses every call there)")
}
