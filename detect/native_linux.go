package detect

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/native"
)

// nativeBinary is the program that is the native backend's init: this one.
func nativeBinary() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe
}

// probeNative builds a real sandbox of the native backend (package
// native) with every feature a launch uses.
func probeNative(ctx context.Context) Result {
	r := Result{Backend: "native", Path: nativeBinary(), Version: kernelRelease()}
	if err := native.Probe(ctx, probeTimeout); err != nil {
		r.Reason = "the native sandbox cannot be built here: " + err.Error() + nativeHint()
		return r
	}
	r.Usable = true
	r.Reason = "ok: cordon's own sandbox (user, mount, pid, ipc, uts, cgroup and network namespaces; the kernel's mount API)"
	r.Landlock = native.LandlockStatus(native.LandlockABI())
	return r
}

func kernelRelease() string {
	k, _ := kernelID()
	return k
}

// nativeHint names the host setting that usually explains a failed probe.
func nativeHint() string {
	switch {
	case readTrim("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return "; unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0); fix: sysctl -w kernel.unprivileged_userns_clone=1"
	case readTrim("/proc/sys/user/max_user_namespaces") == "0":
		return "; user namespaces are off (user.max_user_namespaces=0); fix: sysctl -w user.max_user_namespaces=15000"
	case readTrim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return "; AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1); fix: an AppArmor profile with 'userns,' for the cordon binary, or use --backend bwrap"
	}
	return "; the native backend needs Linux 5.12 or later (open_tree, move_mount, mount_setattr, openat2) and user namespaces"
}
