// Package workspace derives a policy from a workspace and the flags of a
// launch: the presets, Compose, and the protections a writable place
// needs because of what it holds (docs/threat-model.md, classes 6, 11
// and 12). The model it builds on, the five fields and the decision for
// a path, is package policy; this package only adds roots to it.
//
// # Where things are
//
//   - compose.go: Spec (one field per POLICY flag) and Compose, the one
//     way flags and presets become a policy.
//   - preset.go: the --workspace preset (Preset), the name lists
//     (AutoExecNames, ShellFiles, CredentialStores, NestedNames), the
//     --agents-root preset (Agents). A new preset is a function here
//     returning a policy.FsSandboxPolicy, with a Spec field and a step
//     in Compose.
//   - agentcli.go: an agent CLI's preset (--agent NAME): a new agent's
//     state directories and API hosts are one AgentCLIs entry.
//   - scan.go, scancache.go: the bounded scan for nested repositories and
//     its record between launches.
//   - credentials.go: the credential stores the preset denies, and the
//     homes they are looked up under.
//   - git.go, gitplaces.go, guardcache.go: the git guard, which protects
//     what git runs or obeys in each repository found (in parallel, over
//     the places the scan found), and its record.
//
// # Composing a policy
//
// 'cordon run', 'cordon profile', 'cordon explain', the governed runner's
// bash tool and the conformance suite all call Compose, so what the suite
// proves is what cordon runs. A Spec has one field per POLICY flag, plus
// what the caller's environment adds (HOME, PATH, cordon's own
// executable):
//
//	comp, err := workspace.Compose(workspace.Spec{
//		Workspace:   "/home/me/project",
//		Home:        os.Getenv("HOME"),
//		Path:        os.Getenv("PATH"),
//		Executables: workspace.Executables(),
//	})
//	cmd := launcher.Command(comp.Policy, "make", "test")
//	cmd.TmpDir, cmd.CacheDir = comp.TmpDir, comp.CacheDir
//	cmd.IDs = comp.Canonical.IDs()
//	cmd.Canonical = comp.Canonical // no second lookup of every root
//
// Compose applies, in order: the policy file, the root flags, the
// workspace preset (Preset), the agents preset (Agents), a workspace's
// protections on every other writable root and on the agent's directory,
// and last the protections of what runs next on the host: cordon's
// executable, the directories on PATH (Spec.WritablePathDirs opts one
// out) and, when HOME is writable, HomeAgentConfigs. Those last ones only
// ever restrict: each becomes a read-only root only where the policy
// would let the sandbox write it, and never where a root already decides.
// Every path is looked up once, through one policy.Resolver shared with
// the canonicalization (see package policy, one resolution per launch).
package workspace
