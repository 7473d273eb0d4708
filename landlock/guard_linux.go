package landlock

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guardKeeper installs, on the thread about to start the command, a
// seccomp filter of its own that refuses (EPERM) the signals the
// sandbox could aim at its keeper by number: tgkill and
// rt_tgsigqueueinfo to any thread of the keeper, kill and rt_sigqueueinfo
// to the keeper or its process group, and tkill and pidfd_open of this
// very thread (tid). Landlock's signal scope (ABI 6) already refuses
// signals to the keeper, which is outside the domain, but not to this
// thread, in the domain for the instant between the command's exec and
// its end; below ABI 6 the filter is what stands (docs/threat-model.md,
// "A killed launcher", says what it leaves). The keeper's pid lives as
// long as the sandbox; tid may be reused once this thread has ended, by
// a process whose tkill or pidfd_open would then be refused.
func guardKeeper(keeper, tid int) error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = 0xc000003e // AUDIT_ARCH_X86_64
	case "arm64":
		arch = 0xc00000b7 // AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("keeper's filter: no audit arch for %s", runtime.GOARCH)
	}
	const (
		ldW    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		offNr  = 0
		offArc = 4
		offA0  = 16 // args[0], low 32 bits (little endian)
		allow  = 0x7fff0000
		eperm  = 0x00050000 | uint32(unix.EPERM)
	)
	neg := uint32(-int32(keeper))
	// Each block tests args[0] and returns; the jumps are counted to the
	// instruction after the jump.
	p := []unix.SockFilter{
		{Code: ldW, K: offArc},
		{Code: jeq, K: arch, Jt: 1},
		{Code: ret, K: allow}, // another ABI: the main filter decides
		{Code: ldW, K: offNr},
		{Code: jeq, K: unix.SYS_TGKILL, Jt: 8},
		{Code: jeq, K: unix.SYS_RT_TGSIGQUEUEINFO, Jt: 7},
		{Code: jeq, K: unix.SYS_KILL, Jt: 8},
		{Code: jeq, K: unix.SYS_RT_SIGQUEUEINFO, Jt: 7},
		{Code: jeq, K: unix.SYS_TKILL, Jt: 2},
		{Code: jeq, K: unix.SYS_PIDFD_OPEN, Jt: 1},
		{Code: ret, K: allow},
		// tkill, pidfd_open: this thread
		{Code: ldW, K: offA0},
		{Code: jeq, K: uint32(tid), Jt: 6, Jf: 5},
		// tgkill, rt_tgsigqueueinfo: the keeper's thread group
		{Code: ldW, K: offA0},
		{Code: jeq, K: uint32(keeper), Jt: 4, Jf: 3},
		// kill, rt_sigqueueinfo: the keeper, or its group
		{Code: ldW, K: offA0},
		{Code: jeq, K: uint32(keeper), Jt: 2},
		{Code: jeq, K: neg, Jt: 1},
		{Code: ret, K: allow},
		{Code: ret, K: eperm},
	}
	fprog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("keeper's filter: seccomp: %w", err)
	}
	runtime.KeepAlive(p)
	return nil
}
