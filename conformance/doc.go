// Package conformance is cordon's attack catalogue: named cases that try,
// for real and through a real backend, every class of escape in
// docs/threat-model.md, plus the ordinary work that must keep succeeding.
//
// # Cases
//
// A Case builds its own fixture in a temporary directory, states the policy
// it runs under, runs its attempt inside the sandbox, and judges the result
// by the host: did a protected file change, did a secret string come out,
// is a host process still alive, is the project's listing unchanged. cordon's own
// messages are never evidence. Each script ends by printing a marker, so a
// sandbox that failed to start cannot pass a case by doing nothing.
//
// Cases that cannot apply — another backend's mechanism, a tool this host
// lacks, a user the case is not about — are reported as not applicable,
// never as passed.
//
// # Running
//
// Run executes the catalogue with a pool of workers, once as the invoking
// user and, when that is root, again as an unprivileged user (the child
// that runs 'cordon run' gets the user's credentials; the fixture is chowned
// to it). An Executor decides how a case reaches the sandbox: Binary runs
// 'cordon run' in a child process, as a user would; Launcher calls the
// launcher API in this process, which is what the mutation check needs.
//
// Attacks that need a system call no shell tool makes (TIOCSTI, ptrace,
// renameat2, reading inherited descriptors, a nested user namespace) are
// run by the cordon binary itself as 'cordon __attack NAME', so a host
// without a Go toolchain can still run 'cordon verify'.
//
// # The model differential
//
// The model cases generate policies from fixed seeds (nested denies and
// carve-outs, read-only inside writable, files and directories, paths that
// do not exist yet, both write modes), launch one sandbox per policy that
// probes every interesting path, and compare what it could really read and
// write with policy.Canonical.Access.
package conformance
