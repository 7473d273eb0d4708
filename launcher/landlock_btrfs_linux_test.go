package launcher

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/workspace"
)

// TestLandlockBtrfsSubvolumes: on btrfs, making and snapshotting a
// subvolume are ioctls the kernel checks by the mode's bits alone, which
// no Landlock hook sees. Without the filter's refusal a sandbox made a
// subvolume of its own in its workspace, filled it, and snapshotted it
// into a directory outside its writable roots it may only list (here
// HOME/.config/systemd/user: a user unit, run at the next login). Judged
// on the host: nothing appears there. Needs root (a loop-mounted btrfs).
func TestLandlockBtrfsSubvolumes(t *testing.T) {
	needLandlock(t)
	base := btrfsScratch(t)
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{"ws/sub", "home/.config/systemd"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	p, err := workspace.Preset(ws, workspace.Options{Home: home})
	require.NoError(t, err)
	argv, env := testenv.SubprocessArgs("TestHelperLandlockBtrfsSubvolumes", ws+" "+home)
	c := Command(p, argv[0], argv[1:]...)
	c.Backend = BackendLandlock
	c.Dir = ws
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Logf("sandbox: %s", out)
	for _, f := range []string{"home/.config/made", "home/.config/systemd/user", "home/.config/systemd/user/evil.service"} {
		require.NoFileExists(t, filepath.Join(base, f), "a subvolume was made outside the writable roots")
		require.NoDirExists(t, filepath.Join(base, f), "a subvolume was made outside the writable roots")
	}
}

// btrfsScratch mounts a small btrfs of the test's own and returns a
// directory on it.
func btrfsScratch(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.NotApplicable(t, "mounting a btrfs to test on needs root")
	}
	mkfs, err := exec.LookPath("mkfs.btrfs")
	if err != nil {
		testenv.NotApplicable(t, "no mkfs.btrfs on this host")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "fs.img"), filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	require.NoError(t, os.Truncate(createFile(t, img), 128<<20))
	if out, err := exec.Command(mkfs, "-q", img).CombinedOutput(); err != nil {
		testenv.NotApplicable(t, fmt.Sprintf("mkfs.btrfs: %v: %s", err, out))
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		testenv.NotApplicable(t, fmt.Sprintf("mounting a loop btrfs: %v: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt
}

func createFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// TestHelperLandlockBtrfsSubvolumes is the sandbox's side: each attempt
// prints what it got; the host judges.
func TestHelperLandlockBtrfsSubvolumes(t *testing.T) {
	var ws, home string
	_, err := fmt.Sscan(testenv.InSubprocess(t), &ws, &home)
	require.NoError(t, err)
	const (
		subvolCreateV2 = 0x50009418 // BTRFS_IOC_SUBVOL_CREATE_V2
		snapCreateV2   = 0x50009417 // BTRFS_IOC_SNAP_CREATE_V2
	)
	// struct btrfs_ioctl_vol_args_v2: fd, transid, flags, 4 words, name.
	ioctl := func(dir string, req uintptr, src int, name string) error {
		d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(d)
		var args [4096]byte
		binary.LittleEndian.PutUint64(args[0:], uint64(int64(src)))
		copy(args[56:], name)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(d), req, uintptr(unsafe.Pointer(&args[0]))); e != 0 {
			return e
		}
		return nil
	}
	fmt.Println("subvolume in .config:", ioctl(home+"/.config", subvolCreateV2, 0, "made"))
	err = ioctl(ws+"/sub", subvolCreateV2, 0, "evil")
	fmt.Println("subvolume in the workspace:", err)
	if err != nil {
		return
	}
	fmt.Println("fill it:", os.WriteFile(ws+"/sub/evil/evil.service", []byte("[Service]\nExecStart=/bin/true\n"), 0o644))
	src, err := unix.Open(ws+"/sub/evil", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	fmt.Println("snapshot into .config/systemd:", ioctl(home+"/.config/systemd", snapCreateV2, src, "user"))
}

// TestLandlockRulesRefuseLastingIoctls: the ioctls that change a file for
// good (verity, encryption policy and keys) and the btrfs subvolume ones
// stay in the landlock backend's filter, with the gate's rules added too.
// This kernel may lack verity and encryption to try them on: the filter's
// ENOTTY for a refused ioctl is bwrap's TestSeccompNotify.
func TestLandlockRulesRefuseLastingIoctls(t *testing.T) {
	for _, network := range []bool{false, true} {
		got := landlockRules(network).RefuseIoctls
		for _, req := range append(append([]uint32{}, btrfsSubvolumeIoctls...), lastingInodeIoctls...) {
			require.Contains(t, got, req, "ioctl %#x", req)
		}
	}
}
