package bwrap

import "encoding/binary"

// A seccomp filter closes what mounts cannot. With the network unshared, a
// Unix socket file is still reachable through a read-only mount (connect
// needs no write access to the mount), and docker.sock, an ssh-agent or the
// user's D-Bus session bus (systemd-run --user) each run code outside the
// sandbox. So, when the network is off, the filter refuses to create
// AF_UNIX sockets, as Seatbelt's (deny network*) does; socketpair and pipes
// keep working. It also refuses io_uring, which can create and connect
// sockets without passing through the socket and connect system calls, and
// the TIOCSTI/TIOCLINUX ioctls that push input into a terminal.
//
// The program is classic BPF over struct seccomp_data, for x86_64 and
// aarch64. Other system call conventions on those kernels (x32, i386
// compat) are refused outright, so they cannot be used to go around it.

// BPF opcodes and seccomp constants (linux/filter.h, linux/seccomp.h).
const (
	bpfLdWAbs = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK   = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfRetK   = 0x06 // BPF_RET | BPF_K

	retAllow = 0x7fff0000
	retErrno = 0x00050000

	auditArchX8664   = 0xc000003e
	auditArchAarch64 = 0xc00000b7
	x32SyscallBit    = 0x40000000

	afUnix    = 1
	tiocsti   = 0x5412
	tioclinux = 0x541c

	eperm        = 1
	eafnosupport = 97

	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits (little endian)
	offArg1 = 24
)

type sysnums struct{ socket, ioctl, uringSetup, uringEnter, uringRegister uint32 }

var (
	x8664   = sysnums{socket: 41, ioctl: 16, uringSetup: 425, uringEnter: 426, uringRegister: 427}
	aarch64 = sysnums{socket: 198, ioctl: 29, uringSetup: 425, uringEnter: 426, uringRegister: 427}
)

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// Seccomp returns the filter program in the binary form bwrap's --seccomp
// reads. denyUnixSockets is set when the network is off.
func Seccomp(denyUnixSockets bool) []byte {
	var p []insn
	// Labels are resolved by emitting each architecture's block as a
	// self-contained sequence and jumping over it.
	x86 := archBlock(x8664, denyUnixSockets, true)
	arm := archBlock(aarch64, denyUnixSockets, false)
	p = append(p, insn{bpfLdWAbs, 0, 0, offArch})
	p = append(p, insn{bpfJeqK, 0, uint8(len(x86)), auditArchX8664})
	p = append(p, x86...)
	p = append(p, insn{bpfJeqK, 0, uint8(len(arm)), auditArchAarch64})
	p = append(p, arm...)
	// Any other convention (i386 compat, unknown): refuse every call.
	p = append(p, insn{bpfRetK, 0, 0, retErrno | eperm})
	b := make([]byte, 8*len(p))
	for i, in := range p {
		binary.LittleEndian.PutUint16(b[8*i:], in.code)
		b[8*i+2], b[8*i+3] = in.jt, in.jf
		binary.LittleEndian.PutUint32(b[8*i+4:], in.k)
	}
	return b
}

// archBlock decides one architecture's calls; it ends in a return on every
// path, so the block's length is exactly the jump over it.
func archBlock(n sysnums, denyUnix, x32 bool) []insn {
	deny := insn{bpfRetK, 0, 0, retErrno | eperm}
	allow := insn{bpfRetK, 0, 0, retAllow}
	var b []insn
	b = append(b, insn{bpfLdWAbs, 0, 0, offNr})
	if x32 {
		b = append(b, insn{bpfJgeK, 0, 1, x32SyscallBit}, deny)
	}
	for _, nr := range []uint32{n.uringSetup, n.uringEnter, n.uringRegister} {
		b = append(b, insn{bpfJeqK, 0, 1, nr}, deny)
	}
	// ioctl(fd, TIOCSTI|TIOCLINUX, ...)
	b = append(b,
		insn{bpfJeqK, 0, 4, n.ioctl},
		insn{bpfLdWAbs, 0, 0, offArg1},
		insn{bpfJeqK, 1, 0, tiocsti},
		insn{bpfJeqK, 0, 1, tioclinux},
		deny,
	)
	if denyUnix {
		// Reload nr: the ioctl branch may have left arg1 in the accumulator.
		b = append(b,
			insn{bpfLdWAbs, 0, 0, offNr},
			insn{bpfJeqK, 0, 3, n.socket},
			insn{bpfLdWAbs, 0, 0, offArg0},
			insn{bpfJeqK, 0, 1, afUnix},
			insn{bpfRetK, 0, 0, retErrno | eafnosupport},
		)
	}
	return append(b, allow)
}

// Describe is a one-line account of the filter for 'cordon profile'.
func Describe(denyUnixSockets bool) string {
	s := "seccomp: deny io_uring, ioctl TIOCSTI/TIOCLINUX, x32 and i386 calls"
	if denyUnixSockets {
		s += ", socket(AF_UNIX)"
	}
	return s
}
