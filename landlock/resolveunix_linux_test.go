package landlock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/landlock"
)

// TestResolveUnix: where the kernel has LANDLOCK_ACCESS_FS_RESOLVE_UNIX,
// a domain that handles it and grants it nowhere connects to a socket
// it made and not to a host process's, judged by the host's listener.
func TestResolveUnix(t *testing.T) {
	testenv.NeedNewer(t, "Landlock's LANDLOCK_ACCESS_FS_RESOLVE_UNIX", landlock.ResolveUnixError())
	dir := t.TempDir()
	host := filepath.Join(dir, "host.sock")
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(l)
	require.NoError(t, unix.Bind(l, &unix.SockaddrUnix{Name: host}))
	require.NoError(t, unix.Listen(l, 8))
	out, err := testenv.Subprocess(t, "TestHelperResolveUnix", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "own 0\n")
	require.Contains(t, string(out), fmt.Sprintf("host %d\n", unix.EACCES))
	_, _, err = unix.Accept(l)
	require.ErrorIs(t, err, unix.EAGAIN, "the host's socket was reached")
}

func TestHelperResolveUnix(t *testing.T) {
	dir := testenv.InSubprocess(t)
	attr := struct{ fs uint64 }{landlock.ResolveUnix}
	r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	require.Zero(t, e)
	require.NoError(t, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	_, _, e = unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, r, 0, 0)
	require.Zero(t, e)
	try := func(name, path string) {
		c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		err = unix.Connect(c, &unix.SockaddrUnix{Name: path})
		var n unix.Errno
		if err != nil {
			n = err.(unix.Errno)
		}
		fmt.Printf("%s %d\n", name, int(n))
	}
	own := filepath.Join(dir, "own.sock")
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Bind(s, &unix.SockaddrUnix{Name: own}))
	require.NoError(t, unix.Listen(s, 8))
	try("own", own)
	try("host", filepath.Join(dir, "host.sock"))
	_ = os.Stdout.Sync()
}

// TestResolveUnixProbe: the probe's answer names the ABI it found, so a
// skip says what this kernel has.
func TestResolveUnixProbe(t *testing.T) {
	err := landlock.ResolveUnixError()
	if abi := landlock.ABI(); abi <= 7 {
		require.ErrorContains(t, err, fmt.Sprintf("landlock ABI %d", abi))
	}
}
