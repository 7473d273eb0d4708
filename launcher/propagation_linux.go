package launcher

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// privateMountNamespace starts bwrap (cmd) in a mount namespace of its own
// whose mounts are private, when this process may make one (CAP_SYS_ADMIN:
// a root launcher). bwrap makes its namespace's mounts slaves of the
// host's and has no option to make the finished tree private, so a mount
// the host makes under a shared mount point during the run would arrive
// inside, writable; copied from a private namespace, nothing arrives (see
// docs/threat-model.md, section 16). Without the capability this needs a
// user namespace of cordon's own, which the hosts that need bwrap refuse;
// there the limit stands.
func privateMountNamespace(cmd *exec.Cmd) {
	if testhook.BwrapSharedMounts || !mayUnshareMounts() {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// os/exec's child makes / MS_REC|MS_PRIVATE after the unshare.
	cmd.SysProcAttr.Unshareflags |= syscall.CLONE_NEWNS
}

// mayUnshareMounts reports whether this thread holds CAP_SYS_ADMIN.
func mayUnshareMounts() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// unshareForExec does in this process what os/exec's child does for
// cmd's Unshareflags (CLONE_NEWNS only), before it execs in place: on
// this thread, which stays locked to the goroutine (the exec replaces the
// process; on failure the thread ends with the goroutine, its namespace
// with it).
func unshareForExec(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Unshareflags&syscall.CLONE_NEWNS == 0 {
		return nil
	}
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare a mount namespace for bwrap: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make bwrap's mounts private: %w", err)
	}
	return nil
}
