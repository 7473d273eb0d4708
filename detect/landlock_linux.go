package detect

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/landlock"
)

// probeLandlock confines cordon's landlock init with a domain granting one
// file and checks that it holds (landlock.Probe): a kernel that reports an
// ABI but whose domain does not refuse is not usable.
func probeLandlock(ctx context.Context) Result {
	r := Result{Backend: "landlock", Path: nativeBinary(), Version: kernelRelease()}
	abi, err := landlock.Probe(ctx, probeTimeout)
	if abi > 0 {
		r.Landlock = fmt.Sprintf("ABI %d", abi)
	}
	if err != nil {
		r.Reason = "the landlock sandbox cannot be built here: " + err.Error()
		return r
	}
	r.Usable = true
	r.Reason = fmt.Sprintf("ok: Landlock ABI %d, seccomp, no capabilities, no_new_privs and a session of its own; no namespaces (no private /tmp, host processes visible)", abi)
	r.Reason += yamaNote(readYama(), havePtraceCap())
	return r
}

// yamaNote says what Yama's ptrace_scope (-1: no Yama) does to the
// metadata gate: the launcher reads each gated call's arguments from the
// caller's memory (/proc/PID/mem), which needs the ptrace access Yama may
// refuse. Scope 1 allows it (the sandbox descends from the launcher);
// scope 2 only with CAP_SYS_PTRACE; scope 3 never. Refused, every chmod,
// chown, xattr change and utimes of the sandbox fails with EPERM: the
// backend stays usable, stricter.
func yamaNote(scope int, ptraceCap bool) string {
	if scope == 3 || (scope == 2 && !ptraceCap) {
		return fmt.Sprintf("; Yama's ptrace_scope is %d, so cordon cannot read the sandbox's metadata calls: every chmod, chown, "+
			"extended attribute change and utimes inside fails with EPERM (set kernel.yama.ptrace_scope to 1, or run cordon with CAP_SYS_PTRACE where it is 2)", scope)
	}
	return ""
}

func readYama() int {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// havePtraceCap reports whether this process has CAP_SYS_PTRACE in
// effect (root in a container often has not).
func havePtraceCap() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return data[unix.CAP_SYS_PTRACE/32].Effective&(1<<(unix.CAP_SYS_PTRACE%32)) != 0
}
