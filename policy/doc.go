// Package policy holds cordon's filesystem policy: five fields, their
// canonical form, and the model that decides every path.
//
// # Composing a policy
//
// Compose is the one way flags and presets become a policy; 'cordon run',
// 'cordon profile', 'cordon explain', the governed runner's bash tool and
// the conformance suite all call it, so what the suite proves is what
// cordon runs. A Spec has one field per POLICY flag, plus what the
// caller's environment adds (HOME, PATH, cordon's own executable):
//
//	comp, err := policy.Compose(policy.Spec{
//		Workspace:   "/home/me/project",
//		Home:        os.Getenv("HOME"),
//		Path:        os.Getenv("PATH"),
//		Executables: policy.Executables(),
//	})
//	cmd := launcher.Command(comp.Policy, "make", "test")
//	cmd.TmpDir, cmd.IDs = comp.TmpDir, comp.Canonical.IDs()
//	cmd.Canonical = comp.Canonical // no second lookup of every root
//
// Compose applies, in order: the policy file, the root flags, the
// workspace preset (Workspace), the agents preset (Agents), a workspace's
// protections on every other writable root and on the agent's directory,
// and last the protections of what runs next on the host: cordon's
// executable, the directories on PATH (Spec.WritablePathDirs opts one
// out) and, when HOME is writable, HomeAgentConfigs. Those last ones only
// ever restrict: each becomes a read-only root only where the policy
// would let the sandbox write it, and never where a root already decides.
//
// # One resolution per launch
//
// Compose looks every path up once, through one resolver, and the result
// records the identity (device, inode) of every root that exists
// (Canonical.IDs). The launcher canonicalizes again when it starts and
// refuses the launch if a root no longer resolves to the same file
// (Canonical.CheckIDs); with bwrap it then binds the roots from
// descriptors checked against the same identities. A sandbox that swaps
// a directory of a later launch's workspace for a symlink can make that
// launch fail, not run with roots nobody built a policy for.
package policy
