package bwrap

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// run interprets the classic-BPF subset the filter uses over one
// struct seccomp_data, so the tests read decisions, not bytes.
func run(t *testing.T, prog []byte, arch, nr uint32, arg0, arg1 uint64) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	binary.LittleEndian.PutUint64(data[16:], arg0)
	binary.LittleEndian.PutUint64(data[24:], arg1)
	var acc uint32
	for pc := 0; pc*8 < len(prog); {
		code := binary.LittleEndian.Uint16(prog[pc*8:])
		jt, jf := prog[pc*8+2], prog[pc*8+3]
		k := binary.LittleEndian.Uint32(prog[pc*8+4:])
		switch code {
		case bpfLdWAbs:
			acc = binary.LittleEndian.Uint32(data[k:])
			pc++
		case bpfJeqK:
			if acc == k {
				pc += 1 + int(jt)
			} else {
				pc += 1 + int(jf)
			}
		case bpfJgeK:
			if acc >= k {
				pc += 1 + int(jt)
			} else {
				pc += 1 + int(jf)
			}
		case bpfRetK:
			return k
		default:
			t.Fatalf("unknown opcode %#x at %d", code, pc)
		}
	}
	t.Fatal("program fell off its end")
	return 0
}

func TestSeccompDecisions(t *testing.T) {
	const (
		allow     = retAllow
		denyPerm  = retErrno | eperm
		denyAfnos = retErrno | eafnosupport
	)
	tests := []struct {
		name       string
		denyUnix   bool
		arch, nr   uint32
		arg0, arg1 uint64
		want       uint32
	}{
		{"x86 unix socket, network off", true, auditArchX8664, 41, afUnix, 0, denyAfnos},
		{"x86 unix socket, high bits ignored like the kernel", true, auditArchX8664, 41, 1<<32 | afUnix, 0, denyAfnos},
		{"x86 unix socket, network on", false, auditArchX8664, 41, afUnix, 0, allow},
		{"x86 inet socket", true, auditArchX8664, 41, 2, 0, allow},
		{"x86 socketpair", true, auditArchX8664, 53, afUnix, 0, allow},
		{"x86 io_uring_setup", false, auditArchX8664, 425, 0, 0, denyPerm},
		{"x86 io_uring_enter", false, auditArchX8664, 426, 0, 0, denyPerm},
		{"x86 TIOCSTI", false, auditArchX8664, 16, 0, tiocsti, denyPerm},
		{"x86 TIOCLINUX", true, auditArchX8664, 16, 0, tioclinux, denyPerm},
		{"x86 TCGETS", true, auditArchX8664, 16, 0, 0x5401, allow},
		{"x86 ioctl then no stale accumulator", true, auditArchX8664, 16, afUnix, 41, allow},
		{"x32 socket", false, auditArchX8664, x32SyscallBit | 41, 2, 0, denyPerm},
		{"x86 read", true, auditArchX8664, 0, 0, 0, allow},
		{"arm64 unix socket", true, auditArchAarch64, 198, afUnix, 0, denyAfnos},
		{"arm64 TIOCSTI", true, auditArchAarch64, 29, 0, tiocsti, denyPerm},
		{"arm64 read", true, auditArchAarch64, 63, 0, 0, allow},
		{"i386 anything", false, 0x40000003, 3, 0, 0, denyPerm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, run(t, Seccomp(tt.denyUnix), tt.arch, tt.nr, tt.arg0, tt.arg1))
		})
	}
}
