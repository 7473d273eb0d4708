package conformance

import (
	"os"
	"syscall"
)

// Class 9: inherited descriptors. The harness opens descriptors without
// O_CLOEXEC just before the launch, as a careless parent would; the
// launcher must pass only stdin, stdout, stderr and what it was asked to.
func fdCases() []Case {
	// Shells take only descriptors 0-9 in redirections; the helper reads
	// and writes every descriptor as it is (no reopening through /proc).
	read := `for fd in $LEAKED_FDS; do echo "leaked fd $fd"; cat /proc/self/fd/$fd && ok READ_FD; ls /proc/self/fd/$fd/; cat /proc/self/fd/$fd/id; done; ls -l /proc/self/fd/; "$ATTACK" __attack readfds id`
	return []Case{
		{Name: "fd-inherited-file", Class: 9, Summary: "read a denied file through a descriptor the launching process left open",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("outside/secret", h.Secret)
				p.Deny = []string{t}
				o := h.Launch(Launch{Policy: p, Dir: p.Workspace, Argv: sandboxScript(read),
					Leak: []LeakFile{{Path: t, Flag: os.O_RDONLY}}})
				h.NoSecret(o)
				h.Refuse(o, "READ_FD")
			}},
		{Name: "fd-inherited-dir", Class: 9, Summary: "open files relative to a leaked descriptor of a denied directory (openat, /proc/self/fd/N/...)",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.deniedDir(&p, "outside/private")
				o := h.Launch(Launch{Policy: p, Dir: p.Workspace, Argv: sandboxScript(read),
					Leak: []LeakFile{{Path: d, Flag: os.O_RDONLY | syscall.O_DIRECTORY}}})
				h.NoSecret(o)
			}},
		{Name: "fd-inherited-writable", Class: 9, Summary: "write a read-only file through a leaked O_WRONLY|O_APPEND descriptor",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("ws/ro.txt", "original\n")
				p.Readonly = []string{t}
				o := h.Launch(Launch{Policy: p, Dir: p.Workspace,
					Argv: sandboxScript(`for fd in $LEAKED_FDS; do ( echo pwn >> /proc/self/fd/$fd ) && ok WRITE_FD; done; "$ATTACK" __attack writefds pwn`),
					Leak: []LeakFile{{Path: t, Flag: os.O_WRONLY | os.O_APPEND}}})
				h.Refuse(o, "WRITE_FD", "FDWRITE")
				h.Want("ws/ro.txt", "original\n")
			}},
	}
}

// sandboxScript is the argv of a script run the way Sandbox runs one.
func sandboxScript(script string) []string {
	return []string{"/bin/sh", "-c", prologue + script + "\necho \"@@DO\"\"NE@@\"\n"}
}
