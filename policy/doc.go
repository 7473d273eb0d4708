// Package policy is cordon's filesystem policy: the five fields
// (FsSandboxPolicy), their canonical form, and the model that decides
// every path (Canonical: Access, Explain, DecidingRoot). It is the one
// place that says what is allowed; the backends cite it rather than
// restate it.
//
// What a workspace's content adds to a policy (the presets, the scan for
// nested repositories, the git guard, Compose) is package workspace,
// which builds on this one; a new preset goes there, not here.
//
// # One resolution per launch
//
// Canonicalize looks every path up once, through one resolver, and the
// result records the identity (device, inode) of every root that exists
// (Canonical.IDs). A caller that derives roots from the host first (package
// workspace) shares that view through a Resolver, so the policy rests on
// what the derivation saw. The launcher canonicalizes again when it
// starts and refuses the launch if a root no longer resolves to the same
// file (Canonical.CheckIDs); with bwrap it then binds the roots from
// descriptors checked against the same identities. A sandbox that swaps
// a directory of a later launch's workspace for a symlink can make that
// launch fail, not run with roots nobody built a policy for.
//
// # Derived roots
//
// FsSandboxPolicy.Protect adds read-only roots derived from content a
// sandbox may have written. They only ever restrict: Canonicalize keeps
// one only where the rest of the policy allows writes.
package policy
