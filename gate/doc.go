// Package gate is the landlock backend's supervisor, run by the launcher
// outside the sandbox: it decides the metadata calls Landlock does not
// cover: chmod, chown, extended attributes and file
// times, and reading extended attributes and watching with inotify; and,
// through EntryRules and an EntryDecider, the calls that make, remove,
// rename and link names where the backend's own wall cannot say what the
// model says (the entry gate, entry.go). Under the landlock backend the command runs on the host's own
// file system, so without it a sandboxed command could make the user's
// ~/.ssh key world-readable, chmod +x a hook the user keeps, or chmod 000
// the user's files, anywhere outside its writable roots.
//
// # How
//
// The sandbox's init installs cordon's seccomp program built with Rules
// (the calls return SECCOMP_RET_USER_NOTIF) through Install, which gives
// it a listener; it hands the listener to the launcher with SendFd over a
// socket the launcher gave it, and closes its own copy before it execs the
// command. The launcher takes it with RecvFd and runs Serve until the
// sandbox is gone.
//
// For each call Serve reads the path from the caller's memory, resolves it
// itself (openat2, O_PATH, no magic links) from the caller's working
// directory or descriptor, asks the Decider about the path of the object it
// resolved, checks what the kernel would check for the sandbox's own
// identity (the launcher may be root with capabilities, the sandbox has
// none), and, when all agree, performs the call on the descriptor it
// resolved and answers with its result. It never lets the kernel continue
// the call (SECCOMP_USER_NOTIF_FLAG_CONTINUE): the kernel would resolve
// the path again, after the sandbox had a chance to swap it.
//
// The reading calls are decided by the Decider's MayRead and answered
// the same way: the value read on the resolved descriptor is copied into
// the caller's buffer (/proc/<pid>/mem), and a watch is added on the
// caller's own inotify descriptor, taken with pidfd_getfd, through the
// resolved one. A refusal is EACCES.
//
// # Wiring
//
// The launcher, before it starts the init:
//
//	sp, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
//	cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(sp[1]), "gate")) // its number in the spec
//
// The init, on its locked thread, after dropping capabilities,
// no_new_privs and landlock_restrict_self, instead of loading the filter
// another way (one filter: the program with Rules is cordon's whole
// filter):
//
//	l, err := gate.Install(bwrap.Program(gate.Rules(rules))) // error: refuse the launch
//	err = gate.SendFd(gateFd, l)
//	unix.Close(l); unix.Close(gateFd)
//	// then execve at once: a gated call made before SendFd waits forever
//
// The launcher, once the init has started:
//
//	unix.Close(sp[1])
//	l, err := gate.RecvFd(sp[0]) // error (EOF): the init failed first
//	unix.Close(sp[0])
//	id, err := gate.Self()
//	go gate.Serve(ctx, l, gate.Funcs{Change: mayWrite, Read: mayRead}, id)
//
// Serve returns nil once no process of the sandbox is left; cancelling ctx
// stops it, after which gated calls fail with ENOSYS.
//
// # Stricter than the kernel
//
// Extended attributes only in the user namespace; a file with an ACL is
// written (touch, user.* attributes) by its owner only; objects without a
// name (deleted files, pipes, memfds) and paths through magic links are
// refused, but for the caller's own /proc/self/fd/N in a call that
// follows it, decided as that descriptor's call; ACLs answer EOPNOTSUPP.
//
// # The entry gate
//
// With EntryRules the filter also sends the calls that make, remove,
// rename or link names and the opens that make or write a file; a
// Decider that is an EntryDecider decides them. Where the backend's own
// wall allows the call anyway the kernel continues it (that wall checks
// it again); elsewhere the model decides and the gate performs the call
// itself on the directory it resolved, without the launcher's
// capabilities and with the caller's umask, handing a new descriptor
// back with SECCOMP_IOCTL_NOTIF_ADDFD. See docs/threat-model.md,
// "Entries under the landlock backend".
//
// # Connect (a network allowlist)
//
// With a Decider that names a proxy (Proxy, or one with a ProxyAddr
// method) and ConnectRules in the filter, connect(2) is decided too: the
// supervisor takes the caller's socket (pidfd_getfd), reads the address
// once, and connects a TCP socket itself, from its own copy of the
// address, when that address is the proxy's; every other destination,
// and a connect on a socket that is not TCP, is EACCES (connect_linux.go).
package gate
