package launcher

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// apartFromAgent puts this process, and so every command the agent runs
// through it, in a Landlock domain of its own below the agent's. Landlock
// lets a process read another's /proc/<pid>/environ, mem and fds (a
// ptrace access check) only inside its own domain or one below it: the
// agent's environment, which holds its key from its start whatever it
// later drops, is then out of its commands' reach, while /proc's names,
// cmdline and stat, and the commands' own processes, still read. The
// layer handles execution alone and allows it everywhere, so it adds no
// file rule. Best effort: without Landlock (a kernel before 5.13, or
// switched off) the commands run as before (docs/threat-model.md,
// "Secrets in the environment").
func apartFromAgent() {
	// Landlock and no_new_privs bind the calling thread: the exec that
	// follows must be made from it (never unlocked: the process is
	// replaced).
	runtime.LockOSThread()
	attr := unix.LandlockRulesetAttr{Handled_access_fs: unix.LANDLOCK_ACCESS_FS_EXECUTE}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Handled_access_fs), 0)
	if errno != 0 {
		return
	}
	defer unix.Close(int(rfd))
	root, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer unix.Close(root)
	rule := unix.LandlockPathBeneathAttr{Allowed_access: unix.LANDLOCK_ACCESS_FS_EXECUTE, Parent_fd: int32(root)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return
	}
	// Every sandbox already runs with no_new_privs; this keeps the call
	// valid where the helper is started outside one (its tests).
	if unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != nil {
		return
	}
	unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0)
}
