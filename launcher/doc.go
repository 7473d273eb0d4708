// Package launcher starts a command inside a kernel sandbox rendered from a
// filesystem policy. Its Cmd is shaped like os/exec's: Command never fails
// (a lookup error waits in Cmd.Err), Start/Wait/Run/Output behave the same,
// and errors unwrap to *exec.ExitError and friends.
//
// Unlike os/exec's defaults, a sandbox passes only what it means to: the
// child gets stdin, stdout, stderr and ExtraFiles, nothing else (Start marks
// every other descriptor of the calling process close-on-exec, including
// ones it inherited), and the environment it inherits by default (Env nil)
// has the variables whose names mark a secret withheld (WithholdSecrets);
// CleanEnv cuts it down further, InheritEnv passes it whole.
//
// The policy comes from package workspace (Compose) or is written by hand
// (package policy); the launcher only renders and enforces it.
//
// # Backends
//
// Backend "" or "auto" picks, on Linux, cordon's own init (native) where
// its probe passes, else bubblewrap, else Landlock without namespaces
// (package landlock, for hosts where no user namespace can be made), and
// Seatbelt on macOS, after a probe that package detect caches on disk. When no backend is usable Start
// fails (fail closed) unless Backend is "none". Inside a cordon sandbox
// (CORDON_SANDBOX set) the command runs as it is: the outer sandbox already
// confines it, and nested namespaces are blocked there.
//
// # Adding a backend
//
// A backend is a package of its own that renders a *policy.Canonical into
// what its kernel mechanism takes, as a pure function testable on any OS
// (bwrap: arguments; seatbelt: a profile; landlock: a plan), plus, when
// cordon builds the sandbox itself, the init the launcher re-executes
// (native). This package wires it in: its name in backend.go (Backend*,
// ParseBackend), its start in a file of its own (bwrap_linux.go,
// native_linux.go, landlock_linux.go, seatbelt_darwin.go) chosen by sandboxCmd in prepare.go,
// what 'cordon profile' shows in render.go; its probe goes in package
// detect, and the conformance suite runs every case through it.
//
// # Absent names
//
// On Linux nothing of cordon's is made in the user's project: a protected
// path that exists gets its read-only bind (or mask), and one that does
// not is kept from being made by the entry gate (package gate), on every
// backend. Only a writable root the policy names that does not exist yet
// is made on the host before the launch (absentroots_linux.go), and
// stays, as the command would have left it.
package launcher
