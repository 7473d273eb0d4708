package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestLandlockAccessModeThree: open(2) with access mode 3 asks read and
// write permission of the file's mode but gives a descriptor with
// neither, and Landlock's open check asks only for what the descriptor
// reads or writes: without the filter's refusal a sandbox got a
// descriptor on a file in a denied root, whose extended attributes
// fgetxattr and flistxattr read (the metadata gate decides only the calls
// by path) and whose inode flags FS_IOC_GETFLAGS read. Judged by what
// the sandbox printed.
func TestLandlockAccessModeThree(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws, secrets := filepath.Join(base, "ws"), filepath.Join(base, "secrets")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Mkdir(secrets, 0o700))
	key := filepath.Join(secrets, "id_ed25519")
	require.NoError(t, os.WriteFile(key, []byte("SECRET-CONTENTS"), 0o600))
	if err := unix.Setxattr(key, "user.secret", []byte("XATTR-SECRET"), 0); err != nil {
		testenv.NotApplicable(t, fmt.Sprintf("user extended attributes on %s: %v", base, err))
	}
	p, err := workspace.Preset(ws, workspace.Options{Home: t.TempDir()})
	require.NoError(t, err)
	p.DeniedRoots = append(p.DeniedRoots, secrets)
	argv, env := testenv.SubprocessArgs("TestHelperLandlockAccessModeThree", key)
	c := Command(p, argv[0], argv[1:]...)
	c.Backend = BackendLandlock
	c.Dir = ws
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("sandbox: %s", out)
	require.NotContains(t, string(out), "XATTR-SECRET", "a denied file's extended attribute was read from the sandbox")
	require.NotContains(t, string(out), "user.secret", "a denied file's extended attributes were listed from the sandbox")
	require.NotContains(t, string(out), "GETFLAGS ok", "a denied file's inode flags were read from the sandbox")
	require.Contains(t, string(out), "open mode 3: permission denied")
	require.Contains(t, string(out), "openat mode 3: permission denied")
	require.Contains(t, string(out), "O_PATH|3: ok", "O_PATH ignores the access mode: not refused")
}

// TestHelperLandlockAccessModeThree is the sandbox's side: it tries each
// way and prints what it got; the host judges.
func TestHelperLandlockAccessModeThree(t *testing.T) {
	key := testenv.InSubprocess(t)
	p, err := unix.BytePtrFromString(key)
	require.NoError(t, err)
	// open(2) itself (Go's Open is openat).
	r, _, e := unix.Syscall(unix.SYS_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDWR|unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if e != 0 {
		fmt.Println("open mode 3:", e)
	} else {
		fmt.Println("open mode 3: got", r)
		unix.Close(int(r))
	}
	fd, err := unix.Open(key, unix.O_RDWR|unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Println("openat mode 3:", err)
	} else {
		fmt.Println("openat mode 3: got a descriptor")
		buf := make([]byte, 256)
		if n, err := unix.Fgetxattr(fd, "user.secret", buf); err != nil {
			fmt.Println("fgetxattr:", err)
		} else {
			fmt.Printf("fgetxattr: %s\n", buf[:n])
		}
		if n, err := unix.Flistxattr(fd, buf); err != nil {
			fmt.Println("flistxattr:", err)
		} else {
			fmt.Printf("flistxattr: %q\n", buf[:n])
		}
		if _, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err != nil {
			fmt.Println("GETFLAGS:", err)
		} else {
			fmt.Println("GETFLAGS ok")
		}
		unix.Close(fd)
	}
	if fd, err := unix.Open(key, unix.O_PATH|unix.O_RDWR|unix.O_WRONLY|unix.O_CLOEXEC, 0); err != nil {
		fmt.Println("O_PATH|3:", err)
	} else {
		fmt.Println("O_PATH|3: ok")
		unix.Close(fd)
	}
}
