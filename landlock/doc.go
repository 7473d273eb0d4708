// Package landlock is cordon's third Linux backend, for hosts where no
// user namespace can be made (containers under Docker's default seccomp
// profile, Kubernetes pods, CI runners, Ubuntu 23.10 and later under
// AppArmor): the command runs on the host's own file system, confined by
// a Landlock domain, cordon's seccomp filter, no_new_privs, no
// capabilities and a session of its own, with no namespace and no
// privilege (docs/design.md, "landlock").
//
// Landlock grants rights on whole hierarchies and cannot take them back
// below, so the five-field model is rendered by granting, on the way down
// to every place the model narrows (a read-only or denied root inside a
// wider one, a name the model protects before it exists), each existing
// sibling separately instead of their parent. The directories on that way
// are frozen: nothing can be made or removed directly in them. Render
// (plan.go) is that rendering, a pure function of the canonical policy and
// a listing of the host; Plan.Rights and Plan.Allows (model.go) are the
// backend's own model, never wider than the policy's, and every difference
// is listed with its reason (Plan.Describe, Plan.Explain).
//
// What Landlock does not cover (chmod, chown, extended attributes, file
// times, inotify, names made where a directory is frozen, Unix sockets,
// connecting through the proxy) the seccomp filter hands to the
// backend's supervisor in the launcher, package gate. The init and its
// keeper are this package's (init_linux.go, keeper_linux.go).
package landlock
