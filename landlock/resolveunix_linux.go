package landlock

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ResolveUnixError says why this kernel's Landlock cannot control
// connect and sendmsg to pathname Unix sockets (ResolveUnix); nil when
// it can. The probe asks for a ruleset that handles the right alone,
// which a kernel without it refuses (EINVAL), once per process.
func ResolveUnixError() error { return resolveUnixProbe() }

var resolveUnixProbe = sync.OnceValue(func() error {
	abi := ABI()
	if abi < 9 { // Landlock ABI 9 (Linux 7.1) added it
		return fmt.Errorf("landlock ABI %d: LANDLOCK_ACCESS_FS_RESOLVE_UNIX needs ABI 9", abi)
	}
	attr := rulesetAttr{handledFS: ResolveUnix}
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Offsetof(attr.handledNet), 0)
	if errno != 0 {
		return fmt.Errorf("landlock ABI %d: create a ruleset handling LANDLOCK_ACCESS_FS_RESOLVE_UNIX: %w", abi, errno)
	}
	unix.Close(int(r))
	return nil
})
