package conformance

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Class 13: kernel objects shared with the host — the keyrings the
// sandbox inherits, and socket families the network namespace does not
// confine (vsock reaches the hypervisor host) or that no network mode
// needs. docs/threat-model.md has the reasoning; bwrap's seccomp filter is
// the defence.

// Address families and netlink protocols the allowlists name (the
// numbers are Linux's, the same on every architecture).
const (
	afUnix, afInet, afInet6, afNetlink = 1, 2, 10, 16
	afMax                              = 46 // the first family Linux does not know
	netlinkMax                         = 32
)

// familiesBut lists every address family Linux knows but those allowed.
func familiesBut(allowed ...int) []string {
	var s []string
	for f := 0; f < afMax; f++ {
		if !slices.Contains(allowed, f) {
			s = append(s, fmt.Sprint(f))
		}
	}
	return s
}

// keyDesc is the description of a case's key: unique per case, and free
// of the secret (descriptions are listed in /proc/keys).
func keyDesc(h *H, what string) string {
	return "cordon-" + what + "-" + h.Secret[len(h.Secret)-16:]
}

// withOwnUnix adds AF_UNIX to the families a mode allows where the
// Unix socket gate serves it (network off, and an allowlist): the
// sandbox's own sockets work there, the host's stay out of reach (the
// unix-own-sockets cases).
func withOwnUnix(h *H, network bool, allowed []int) []int {
	if !network && !slices.Contains(allowed, afUnix) {
		return append(slices.Clone(allowed), afUnix)
	}
	return allowed
}

func kernelCases() []Case {
	var cs []Case
	for _, network := range []bool{false, true} {
		suffix, mode := "", "network off"
		allowed := []int{afInet, afInet6, afNetlink}
		if network {
			suffix, mode = "-network-on", "network on"
		}
		pol := func(h *H) Policy {
			_, p := h.ws()
			p.Network = network
			return p
		}
		cs = append(cs,
			Case{Name: "kernel-vsock" + suffix, Class: Kernel, Backends: linuxOnly,
				Summary: "socket(AF_VSOCK) and connect to the hypervisor host (CID 2), " + mode + " (cordon __attack vsock)",
				Run: func(h *H) {
					o := h.Sandbox(pol(h), `"$ATTACK" __attack vsock`)
					h.Refuse(o, "VSOCK")
				}},
			Case{Name: "kernel-netlink-protocols" + suffix, Class: Kernel, Backends: linuxOnly,
				Summary: "socket(AF_NETLINK) with every protocol but NETLINK_ROUTE (audit, uevents, sock_diag, generic...), " + mode,
				Run: func(h *H) {
					var ps []string
					for p := 1; p < netlinkMax; p++ {
						ps = append(ps, fmt.Sprintf("%d/%d", afNetlink, p))
					}
					o := h.Sandbox(pol(h), `"$ATTACK" __attack socket `+strings.Join(ps, " "))
					h.Refuse(o, "SOCKET")
				}},
			Case{Name: "kernel-socket-families" + suffix, Class: Kernel, Backends: linuxOnly,
				Summary: "socket() of every address family the mode does not allow (AF_PACKET, AF_ALG, AF_BLUETOOTH, AF_KEY, AF_XDP, AF_CAN, AF_TIPC, AF_RDS...), " + mode,
				Run: func(h *H) {
					o := h.Sandbox(pol(h), `"$ATTACK" __attack socket `+strings.Join(familiesBut(withOwnUnix(h, network, allowed)...), " "))
					h.Refuse(o, "SOCKET")
				}},
		)
	}
	return append(cs,
		Case{Name: "kernel-sysctl-write", Class: Kernel, Backends: linuxOnly,
			Summary: "write a global sysctl through /proc/sys (kernel.printk_ratelimit_burst stands for kernel.core_pattern and kernel.modprobe, which make the host's root run a program); the host's root owns the files, so a root launcher's sandbox may write them without any capability",
			Run: func(h *H) {
				const sysctl = "/proc/sys/kernel/printk_ratelimit_burst"
				b, err := os.ReadFile(sysctl)
				if err != nil {
					h.NotApplicable("%s: %v", sysctl, err)
				}
				orig := strings.TrimSpace(string(b))
				// A value of this case's own, so that a parallel run (the
				// mutation check) that finds another value is not fooled.
				mine := fmt.Sprint(1000 + int(h.Secret[len(h.Secret)-1])*97 + int(h.Secret[len(h.Secret)-2]))
				current := func() string { b, _ := os.ReadFile(sysctl); return strings.TrimSpace(string(b)) }
				h.Cleanup(func() {
					if current() == mine {
						os.WriteFile(sysctl, []byte(orig), 0)
					}
				})
				_, p := h.ws()
				// Both opens: the shell's (O_CREAT, which the entry gate
				// decides under native and bwrap) and dd's without O_CREAT
				// (the kernel's alone: /proc/sys's read-only bind holds it).
				o := h.Sandbox(p, `{ echo "$V" > "$S" || printf '%s\n' "$V" | dd of="$S" conv=nocreat,notrunc status=none; } && ok SYSCTL`, "S="+sysctl, "V="+mine)
				if current() == mine {
					h.Errorf("host: %s is %s, written from inside the sandbox:\n%s", sysctl, mine, o)
				}
			}},
		Case{Name: "kernel-bpf-userfaultfd-syslog", Class: Kernel, Backends: linuxOnly,
			Summary: "create a BPF map and a user-mode userfaultfd, read the kernel log (cordon __attack kernel-calls)",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `"$ATTACK" __attack kernel-calls`)
				h.Refuse(o, "BPF", "USERFAULTFD", "SYSLOG")
			}},
		Case{Name: "kernel-keyring-read", Class: Kernel, Backends: linuxOnly,
			Summary: "read the keys of the launcher's session keyring (keyctl, request_key, /proc/keys)",
			Run: func(h *H) {
				_, p := h.ws()
				d := keyDesc(h, "key")
				h.InSessionKeyring(d, func(func(string) bool) {
					o := h.Sandbox(p, `"$ATTACK" __attack keyring read "$D"`, "D="+d)
					h.NoSecret(o)
					h.Refuse(o, "KEYREAD")
				})
			}},
		Case{Name: "kernel-keyring-list", Class: Kernel, Backends: linuxOnly,
			Summary: "list the descriptions of the launcher's keys in /proc/keys (global, not per namespace)",
			Without: map[string]string{"landlock": "no user namespace: the sandbox keeps the launcher's uid, and /proc/keys shows every key " +
				"whose permissions give its user view (add_key's default, 0x3f010000) whatever the session; the init joins a new " +
				"session keyring, so keys only their possessor may view are hidden, but the case's key grants its user view"},
			Run: func(h *H) {
				_, p := h.ws()
				d := keyDesc(h, "key")
				h.InSessionKeyring(d, func(func(string) bool) {
					o := h.Sandbox(p, `cat /proc/keys /proc/key-users`)
					if strings.Contains(o.Stdout, d) {
						h.Errorf("the description of the launcher's key %q came out of the sandbox:\n%s", d, o)
					}
				})
			}},
		Case{Name: "kernel-keyring-plant", Class: Kernel, Backends: linuxOnly,
			Summary: "add a key to the session and user keyrings; the host must not find it afterwards",
			Run: func(h *H) {
				_, p := h.ws()
				h.InSessionKeyring(keyDesc(h, "key"), func(find func(string) bool) {
					d := keyDesc(h, "planted")
					o := h.Sandbox(p, `"$ATTACK" __attack keyring plant "$D"`, "D="+d)
					if find(d) {
						h.Errorf("host: key %q, planted from inside, is in the launcher's keyrings:\n%s", d, o)
					}
				})
			}},
	)
}

// kernelWorkCases are the ordinary uses of the network stack the socket
// allowlists keep: loopback servers and clients (tests bind 127.0.0.1),
// name resolution, 'ip'. On Seatbelt the network off denies loopback too.
func kernelWorkCases() []Case {
	const loopback = `
tcp() { python3 -c '
import socket, sys
s = socket.socket(int(sys.argv[1])); s.bind((sys.argv[2], 0)); s.listen(1)
c = socket.create_connection(s.getsockname()[:2]); a, _ = s.accept()
c.sendall(b"ping"); assert a.recv(4) == b"ping"
u = socket.socket(int(sys.argv[1]), socket.SOCK_DGRAM); u.bind((sys.argv[2], 0))
v = socket.socket(int(sys.argv[1]), socket.SOCK_DGRAM); v.sendto(b"pong", u.getsockname()[:2])
assert u.recv(4) == b"pong"
' "$@"; }
tcp 2 127.0.0.1 && ok LOOPBACK4
if [ "$(cat /proc/sys/net/ipv6/conf/lo/disable_ipv6 2>/dev/null)" = 0 ]; then tcp 10 ::1 && ok LOOPBACK6; else ok LOOPBACK6; fi
python3 -c '
import socket
assert any(a[4][0] in ("127.0.0.1", "::1") for a in socket.getaddrinfo("localhost", 80, flags=socket.AI_ADDRCONFIG))
a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"
' && ok RESOLVE`
	var cs []Case
	for _, network := range []bool{false, true} {
		suffix := ""
		var without map[string]string
		if network {
			suffix = "-network-on"
		} else {
			// What the backend breaks by design, not a freeze.
			without = map[string]string{"landlock": "with the network off the landlock backend has no network namespace, so its loopback is the host's: TCP there goes through the gate (work-localhost-server), UDP stays refused (docs/design.md)"}
		}
		cs = append(cs, Case{Name: "work-loopback" + suffix, Class: Work, Backends: linuxOnly, Needs: []string{"python3"}, Without: without,
			Summary: "TCP and UDP on 127.0.0.1 and ::1, getaddrinfo(localhost, AI_ADDRCONFIG), socketpair",
			Run: func(h *H) {
				_, p := h.ws()
				p.Network = network
				o := h.Sandbox(p, loopback)
				h.Expect(o, "LOOPBACK4", "LOOPBACK6", "RESOLVE")
			}})
	}
	return append(cs,
		Case{Name: "work-getent-localhost", Class: Work, Backends: linuxOnly, Needs: []string{"getent"},
			Summary: "glibc's resolver (getent ahosts, which asks NETLINK_ROUTE for the addresses in use) finds localhost",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `getent ahosts localhost | grep -q -e 127.0.0.1 -e ::1 && ok GETENT`)
				h.Expect(o, "GETENT")
			}},
		Case{Name: "work-ip-addr", Class: Work, Backends: linuxOnly, Needs: []string{"ip"},
			Summary: "'ip addr' and 'ip route' read the sandbox's own interfaces through NETLINK_ROUTE",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `ip -o addr show dev lo | grep -q 127.0.0.1 && ok IPADDR; ip route show >/dev/null && ok IPROUTE`)
				h.Expect(o, "IPADDR", "IPROUTE")
			}},
	)
}
