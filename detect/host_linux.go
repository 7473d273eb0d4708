package detect

import (
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/native"
)

// kernelID names the running kernel and boot: a new kernel or a reboot
// can change what namespaces are allowed, so either invalidates the cache.
func kernelID() (release, boot string) {
	return readTrim("/proc/sys/kernel/osrelease"), readTrim("/proc/sys/kernel/random/boot_id")
}

// policyID joins everything else that decides whether bwrap may create
// its namespaces: the three sysctls, the AppArmor policy revision and the
// user namespace we run in (a container or outer sandbox has its own).
func policyID() string {
	ns, _ := os.Readlink("/proc/self/ns/user")
	return "userns_clone=" + readTrim("/proc/sys/kernel/unprivileged_userns_clone") +
		" max_user_namespaces=" + readTrim("/proc/sys/user/max_user_namespaces") +
		" apparmor_restrict=" + readTrim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") +
		" apparmor_rev=" + readTrim("/sys/kernel/security/apparmor/revision") +
		" userns=" + ns
}

func osProductVersion() string { return "" }

// insideBwrap reports whether this process runs in a bwrap pid namespace,
// where bwrap itself is pid 1; a host's pid 1 is an init system.
var insideBwrap = func() bool {
	b, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(b)) == "bwrap"
}

// insideNative reports whether this process runs in a sandbox of the
// native backend, whose pid 1 is cordon's init (package native); nothing
// inside can rename it, as only a process itself may set its name.
var insideNative = func() bool {
	b, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(b)) == native.InitName
}
