package bwrap

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// call is one struct seccomp_data.
type call struct {
	arch, nr         uint32
	arg0, arg1, arg2 uint64
}

// run interprets the classic-BPF subset the filter uses over one
// struct seccomp_data, so the tests read decisions, not bytes. It checks
// what the kernel's checker would: jumps stay inside, the end is a return.
func run(t testing.TB, prog []byte, c call) uint32 {
	t.Helper()
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], c.nr)
	binary.LittleEndian.PutUint32(data[4:], c.arch)
	binary.LittleEndian.PutUint64(data[16:], c.arg0)
	binary.LittleEndian.PutUint64(data[24:], c.arg1)
	binary.LittleEndian.PutUint64(data[32:], c.arg2)
	n := len(prog) / 8
	require.LessOrEqual(t, n, 4096, "BPF_MAXINSNS")
	var acc uint32
	for pc := 0; pc < n; {
		code := binary.LittleEndian.Uint16(prog[pc*8:])
		jt, jf := prog[pc*8+2], prog[pc*8+3]
		k := binary.LittleEndian.Uint32(prog[pc*8+4:])
		switch code {
		case bpfLdWAbs:
			require.Zero(t, k%4, "unaligned load at %d", pc)
			require.Less(t, int(k), 64, "load past seccomp_data at %d", pc)
			acc = binary.LittleEndian.Uint32(data[k:])
			pc++
		case bpfJa:
			pc += 1 + int(k)
		case bpfJeqK:
			if acc == k {
				pc += 1 + int(jt)
			} else {
				pc += 1 + int(jf)
			}
		case bpfJsetK:
			if acc&k != 0 {
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
		case bpfAluAndK:
			acc &= k
			pc++
		case bpfRetK:
			return k
		default:
			t.Fatalf("unknown opcode %#x at %d", code, pc)
		}
		require.LessOrEqual(t, pc, n, "jump past the end")
	}
	t.Fatal("program fell off its end")
	return 0
}

const (
	allow     = retAllow
	denyPerm  = retErrno | eperm
	denyNosys = retErrno | enosys
	denyAfnos = retErrno | eafnosupport
	denyAcces = retErrno | eacces
	denyProto = retErrno | eprotonosupport
)

func TestSeccompDecisions(t *testing.T) {
	x86, arm := uint32(auditArchX8664), uint32(auditArchAarch64)
	tests := []struct {
		name    string
		network bool
		c       call
		want    uint32
	}{
		{"x86 unix socket, network off", false, call{x86, 41, afUnix, 0, 0}, denyAcces},
		{"x86 unix socket, high bits ignored like the kernel", false, call{x86, 41, 1<<32 | afUnix, 0, 0}, denyAcces},
		{"x86 unix socket, network on (the host's sockets)", true, call{x86, 41, afUnix, 0, 0}, denyAcces},
		{"x86 inet socket, network off (own loopback)", false, call{x86, 41, afInet, 1, 0}, allow},
		{"x86 inet6 socket, network off", false, call{x86, 41, afInet6, 2, 0}, allow},
		{"x86 inet socket, network on", true, call{x86, 41, afInet, 1, 0}, allow},
		{"x86 vsock, network off", false, call{x86, 41, afVsock, 1, 0}, denyAfnos},
		{"x86 vsock, network on", true, call{x86, 41, afVsock, 1, 0}, denyAfnos},
		{"x86 packet, network on", true, call{x86, 41, afPacket, 3, 0x0300}, denyAfnos},
		{"x86 alg", true, call{x86, 41, afAlg, 5, 0}, denyAfnos},
		{"x86 netlink route, network off", false, call{x86, 41, afNetlink, 3, netlinkRoute}, allow},
		{"x86 netlink route, network on", true, call{x86, 41, afNetlink, 3, netlinkRoute}, allow},
		{"x86 netlink route, high bits ignored", true, call{x86, 41, afNetlink, 3, 7<<32 | netlinkRoute}, allow},
		{"x86 netlink sock_diag", true, call{x86, 41, afNetlink, 3, netlinkSockDiag}, denyProto},
		{"x86 netlink audit", false, call{x86, 41, afNetlink, 3, netlinkAudit}, denyProto},
		{"x86 netlink uevent", false, call{x86, 41, afNetlink, 2, netlinkKobjectUevent}, denyProto},
		{"x86 socketpair unix, network off", false, call{x86, 53, afUnix, 1, 0}, allow},
		{"x86 socketpair tipc", true, call{x86, 53, afTipc, 1, 0}, denyAfnos},
		{"x86 io_uring_setup", true, call{x86, 425, 0, 0, 0}, denyPerm},
		{"x86 io_uring_enter", false, call{x86, 426, 0, 0, 0}, denyPerm},
		{"x86 add_key", true, call{x86, 248, 0, 0, 0}, denyNosys},
		{"x86 request_key", false, call{x86, 249, 0, 0, 0}, denyNosys},
		{"x86 keyctl", false, call{x86, 250, 0, 0, 0}, denyNosys},
		{"x86 bpf", true, call{x86, 321, 0, 0, 0}, denyPerm},
		{"x86 userfaultfd", true, call{x86, 323, 0, 0, 0}, denyPerm},
		{"x86 syslog", false, call{x86, 103, 3, 0, 0}, denyPerm},
		{"x86 perf_event_open stays", false, call{x86, 298, 0, 0, 0}, allow},
		{"x86 TIOCSTI", true, call{x86, 16, 0, tiocsti, 0}, denyPerm},
		{"x86 TIOCLINUX", false, call{x86, 16, 0, tioclinux, 0}, denyPerm},
		{"x86 TCGETS", false, call{x86, 16, 0, 0x5401, 0}, allow},
		{"x86 ioctl with socket's arguments", false, call{x86, 16, afUnix, 41, 0}, allow},
		{"x32 socket", true, call{x86, x32SyscallBit | 41, afInet, 0, 0}, denyPerm},
		{"x32 read", true, call{x86, x32SyscallBit, 0, 0, 0}, denyPerm},
		{"x86 read", false, call{x86, 0, 0, 0, 0}, allow},
		{"arm64 unix socket", false, call{arm, 198, afUnix, 0, 0}, denyAcces},
		{"arm64 vsock, network on", true, call{arm, 198, afVsock, 0, 0}, denyAfnos},
		{"arm64 netlink generic", true, call{arm, 198, afNetlink, 3, netlinkGeneric}, denyProto},
		{"arm64 netlink route", false, call{arm, 198, afNetlink, 3, netlinkRoute}, allow},
		{"arm64 inet", false, call{arm, 198, afInet, 1, 0}, allow},
		{"arm64 socketpair unix", false, call{arm, 199, afUnix, 1, 0}, allow},
		{"arm64 keyctl", true, call{arm, 219, 0, 0, 0}, denyNosys},
		{"arm64 add_key", true, call{arm, 217, 0, 0, 0}, denyNosys},
		{"arm64 bpf", true, call{arm, 280, 0, 0, 0}, denyPerm},
		{"arm64 TIOCSTI", false, call{arm, 29, 0, tiocsti, 0}, denyPerm},
		{"arm64 read", false, call{arm, 63, 0, 0, 0}, allow},
		{"arm64 x32 bit is an ordinary number", false, call{arm, x32SyscallBit | 63, 0, 0, 0}, allow},
		{"i386 anything", true, call{0x40000003, 3, 0, 0, 0}, denyPerm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, run(t, Seccomp(SocketsFor(tt.network)), tt.c))
		})
	}
}

// TestSeccompNoUserns: with NoUserns, a new user namespace is refused
// through clone, unshare and clone3 on both architectures, and nothing
// else changes for those calls; without it they are allowed.
func TestSeccompNoUserns(t *testing.T) {
	x86, arm := uint32(auditArchX8664), uint32(auditArchAarch64)
	const newuser, newns, thread = cloneNewuser, 0x20000, 0x10000
	tests := []struct {
		name string
		c    call
		want uint32
	}{
		{"x86 clone newuser", call{x86, 56, newuser | 17, 0, 0}, denyPerm},
		{"x86 clone newuser, high bits", call{x86, 56, 1<<40 | newuser, 0, 0}, denyPerm},
		{"x86 clone thread", call{x86, 56, thread | 0x100, 0, 0}, allow},
		{"x86 clone newns alone", call{x86, 56, newns, 0, 0}, allow},
		{"x86 unshare newuser", call{x86, 272, newuser | newns, 0, 0}, denyPerm},
		{"x86 unshare files", call{x86, 272, 0x400, 0, 0}, allow},
		{"x86 clone3", call{x86, 435, 0, 88, 0}, denyNosys},
		{"arm64 clone newuser", call{arm, 220, newuser, 0, 0}, denyPerm},
		{"arm64 unshare newuser", call{arm, 97, newuser, 0, 0}, denyPerm},
		{"arm64 clone3", call{arm, 435, 0, 88, 0}, denyNosys},
		{"arm64 clone plain", call{arm, 220, 17, 0, 0}, allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RulesFor(SocketsNoNamespace())
			r.NoUserns = true
			require.Equal(t, uint32(tt.want), run(t, Program(r), tt.c))
			require.Equal(t, uint32(allow), run(t, Seccomp(SocketsFor(false)), tt.c), "without NoUserns")
		})
	}
	r := RulesFor(SocketsNoNamespace())
	for f, want := range map[uint64]uint32{afUnix: denyAcces, afInet: denyAcces, afInet6: denyAfnos} {
		require.Equal(t, want, run(t, Program(r), call{x86, 41, f, 1, 0}), "family %d", f)
	}
	require.Equal(t, uint32(allow), run(t, Program(r), call{x86, 41, afNetlink, 3, netlinkRoute}))
	require.Equal(t, uint32(allow), run(t, Program(r), call{x86, 53, afUnix, 1, 0}), "socketpair")
}

// TestSeccompAllowlist walks every family and netlink protocol, and every
// system call number, for both modes and both architectures: what is not
// on a list is refused, what the filter does not name is allowed.
func TestSeccompAllowlist(t *testing.T) {
	for _, s := range []Sockets{socketsOff, socketsHost} {
		prog := Seccomp(s)
		for _, ar := range archs {
			for f := uint64(0); f < 300; f++ {
				want := uint32(denyAfnos)
				if slices.Contains(refusedEACCES, uint32(f)) {
					want = denyAcces
				}
				if slices.Contains(s.Families, uint32(f)) && f != afNetlink {
					want = allow
				}
				if f == afNetlink {
					want = denyProto // protocol 99 is on no list
				}
				require.Equal(t, want, run(t, prog, call{ar.audit, ar.nr["socket"], f, 1, 99}), "%s %s family %d", s.Mode, ar.name, f)
			}
			for _, f := range []uint64{1 << 31, 0xffffffff, afMax} {
				require.Equal(t, uint32(denyAfnos), run(t, prog, call{ar.audit, ar.nr["socket"], f, 1, 0}), "%s family %#x", ar.name, f)
			}
			for p := uint64(0); p < 64; p++ {
				want := uint32(denyProto)
				if slices.Contains(s.Netlink, uint32(p)) {
					want = allow
				}
				require.Equal(t, want, run(t, prog, call{ar.audit, ar.nr["socket"], afNetlink, 3, p}), "%s netlink %d", ar.name, p)
			}
			named := map[uint32]string{}
			for name, n := range ar.nr {
				named[n] = name
			}
			for nr := uint32(0); nr < 600; nr++ {
				if named[nr] != "" {
					continue
				}
				want := uint32(allow)
				if ar.x32 && nr >= x32SyscallBit {
					want = denyPerm
				}
				require.Equal(t, want, run(t, prog, call{ar.audit, nr, afVsock, tiocsti, 1}), "%s nr %d", ar.name, nr)
			}
			for _, rf := range Refusals() {
				require.Equal(t, retErrno|rf.Errno, run(t, prog, call{ar.audit, ar.nr[rf.Syscall], afInet, 0, 0}), "%s %s", ar.name, rf.Syscall)
			}
		}
	}
}

// TestSeccompModes shows a mode is only a value: a proxy-like mode with
// AF_INET alone needs no change to the program builder.
func TestSeccompModes(t *testing.T) {
	proxy := Sockets{Mode: "proxy", Families: []uint32{afInet}}
	prog := Seccomp(proxy)
	require.Equal(t, uint32(allow), run(t, prog, call{auditArchX8664, 41, afInet, 1, 0}))
	require.Equal(t, uint32(denyAfnos), run(t, prog, call{auditArchX8664, 41, afInet6, 1, 0}))
	require.Equal(t, uint32(denyAfnos), run(t, prog, call{auditArchX8664, 41, afNetlink, 3, 0}))
	require.Equal(t, uint32(allow), run(t, prog, call{auditArchX8664, 53, afUnix, 1, 0}))

	// Every family and protocol on the lists (what a mutation that puts
	// back the old denylist builds) still assembles: the 32-bit jumps to
	// each architecture's block keep it in range.
	var all Sockets
	for f := uint32(0); f < 200; f++ {
		all.Families = append(all.Families, f)
	}
	for p := uint32(0); p < 32; p++ {
		all.Netlink = append(all.Netlink, p)
	}
	prog = Program(Rules{Sockets: all})
	require.Equal(t, uint32(allow), run(t, prog, call{auditArchAarch64, 198, afVsock, 1, 0}))
	require.Equal(t, uint32(allow), run(t, prog, call{auditArchAarch64, 219, 0, 0, 0}))
}

func TestSeccompDescribe(t *testing.T) {
	d := Describe(RulesFor(socketsOff))
	for _, w := range []string{"keyctl", "add_key", "request_key", "bpf", "io_uring_setup", "TIOCSTI",
		"(network off) AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE) only"} {
		require.Contains(t, d, w)
	}
	require.NotContains(t, d, "AF_UNIX, AF_INET")
	require.Contains(t, Describe(RulesFor(socketsHost)), "(network on) AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE) only")
}

func TestSeccompAssemblerRefusesBadJumps(t *testing.T) {
	back := asm{}
	back.label("x")
	back.emit(insn{code: bpfJeqK, t: "x"})
	require.Panics(t, func() { back.assemble() })
	far := asm{}
	far.emit(insn{code: bpfJeqK, t: "far"})
	for range 300 {
		far.emit(insn{code: bpfRetK})
	}
	far.label("far")
	far.emit(insn{code: bpfRetK})
	require.PanicsWithValue(t, `bwrap: seccomp: instruction 0: jump to "far" is 300 long`, func() { far.assemble() })
	require.Panics(t, func() { Program(Rules{Refuse: []Refusal{{"no_such_call", eperm}}}) })
}

// BenchmarkSeccomp is what building the filter adds to each launch:
//
//	go test ./bwrap -run '^$' -bench Seccomp -benchmem
func BenchmarkSeccomp(b *testing.B) {
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(Seccomp(socketsOff))
	}
	b.ReportMetric(float64(n/8), "insns")
}

func ExampleDescribe() {
	for _, s := range strings.Split(Describe(RulesFor(socketsOff)), "; ") {
		fmt.Println(s)
	}
	// Output:
	// seccomp: refuse io_uring_setup, io_uring_enter, io_uring_register, add_key, keyctl, request_key, bpf, userfaultfd, syslog, ioctl TIOCSTI/TIOCLINUX, fcntl F_SETLEASE, Unix datagram sockets, x32 and i386 calls
	// sockets (network off) AF_INET, AF_INET6, AF_NETLINK (NETLINK_ROUTE) only, socketpair AF_UNIX only
}

// TestRenderSockets: the plan's program follows Network, unless a mode of
// its own is given; /proc/sys and the like are read-only, /proc/keys is
// masked, where they exist.
func TestRenderSockets(t *testing.T) {
	c := canon(t, policy.FsSandboxPolicy{})
	for _, network := range []bool{false, true} {
		pl, err := Render(c, Options{Network: network, Stat: fakeFS()})
		require.NoError(t, err)
		require.Equal(t, Seccomp(SocketsFor(network)), pl.Seccomp)
		require.Equal(t, RulesFor(SocketsFor(network)), pl.Rules)
	}
	proxy := Sockets{Mode: "proxy", Families: []uint32{afInet}}
	pl, err := Render(c, Options{Sockets: &proxy, Stat: fakeFS()})
	require.NoError(t, err)
	require.Equal(t, Seccomp(proxy), pl.Seccomp)
	require.Contains(t, pl.Args, "--unshare-net")
	require.NotContains(t, pl.Args, "/proc/keys")

	pl, err = Render(c, Options{Stat: fakeFS("/proc/keys", "/proc/key-users", "/proc/sys/", "/proc/bus/")})
	require.NoError(t, err)
	args := strings.Join(pl.Args, " ")
	require.Contains(t, args, "--proc /proc --ro-bind /proc/sys /proc/sys --ro-bind /proc/bus /proc/bus "+
		"--ro-bind /dev/null /proc/keys --ro-bind /dev/null /proc/key-users --dev /dev")
}

// TestSeccompUnixStreamOnly: AF_UNIX stream and seqpacket sockets and
// socketpairs, with their flags, and no datagram ones (EACCES), on both
// architectures; the other families as the mode says.
func TestSeccompUnixStreamOnly(t *testing.T) {
	s := SocketsNoNamespace()
	s.Families = append(s.Families, AFUnix)
	s.UnixStreamOnly = true
	prog := Program(RulesFor(s))
	const sockNonblock, sockCloexec = 0o4000, 0o2000000
	for _, ar := range archs {
		for _, nr := range []uint32{ar.nr["socket"], ar.nr["socketpair"]} {
			for typ, want := range map[uint64]uint32{
				1: allow, 5: allow, 1 | sockNonblock | sockCloexec: allow, 5 | sockCloexec: allow,
				2: retErrno | eacces, 2 | sockCloexec: retErrno | eacces, 3: retErrno | eacces,
			} {
				require.Equal(t, want, run(t, prog, call{ar.audit, nr, afUnix, typ, 0}), "%s nr %d type %#x", ar.name, nr, typ)
			}
			require.Equal(t, uint32(denyAfnos), run(t, prog, call{ar.audit, nr, afTipc, 1, 0}), "%s nr %d", ar.name, nr)
		}
		require.Equal(t, uint32(retErrno|eacces), run(t, prog, call{ar.audit, ar.nr["socket"], afInet, 1, 0}), ar.name)
		require.Equal(t, uint32(allow), run(t, prog, call{ar.audit, ar.nr["socket"], afNetlink, 3, netlinkRoute}), ar.name)
	}
}

// TestSeccompLeases: every program refuses a read lease (EINVAL) and
// lets every other fcntl through, on both architectures.
func TestSeccompLeases(t *testing.T) {
	for _, prog := range [][]byte{Seccomp(SocketsFor(false)), Seccomp(SocketsFor(true)), Seccomp(SocketsProxy()),
		Program(Rules{Sockets: SocketsNoNamespace(), Refuse: append(Refusals(), PosixMQRefusals()...), SelfOnly: true, NoUserns: true})} {
		for _, ar := range archs {
			fcntl := ar.nr["fcntl"]
			require.Equal(t, uint32(retErrno|einval), run(t, prog, call{ar.audit, fcntl, 3, fSetlease, 0}), "%s F_SETLEASE", ar.name)
			for _, cmd := range []uint64{0, 1, 2, 3, 4, 1025, 1026, 1030, 1031} { // F_DUPFD .. F_GETLEASE, F_NOTIFY, F_DUPFD_CLOEXEC
				require.Equal(t, uint32(allow), run(t, prog, call{ar.audit, fcntl, 3, cmd, 0}), "%s fcntl %d", ar.name, cmd)
			}
		}
	}
	r := RulesFor(SocketsFor(false))
	r.Refuse = append(r.Refuse, PosixMQRefusals()...)
	r.Refuse = append(r.Refuse, MountListRefusals()...)
	prog := Program(r)
	for _, ar := range archs {
		for _, n := range []string{"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", "listmount", "statmount"} {
			require.Equal(t, uint32(retErrno|enosys), run(t, prog, call{ar.audit, ar.nr[n], 0, 0, 0}), "%s %s", ar.name, n)
		}
	}
}
