package launcher

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// errLandlockAllowlist refuses a network allowlist under the landlock
// backend: without a network namespace the proxy cannot be the only way
// out, and a Landlock connect rule names a port, not a host (a rule for
// 443 reaches every host on 443).
var errLandlockAllowlist = errors.New("network: a domain allowlist cannot be enforced by the landlock backend " +
	"(it has no network namespace to make the proxy the only way out, and a Landlock connect rule names a port, not a host); " +
	"use --network off, or --network on for the host's whole network, or a host where user namespaces work (--backend native or bwrap)")

// landlockCmd starts this program as the landlock backend's init
// (package landlock), which confines itself with the plan rendered from
// the policy and execs the command in its own place: no mounts, no stub
// registry, no namespaces.
func (c *Cmd) landlockCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	if c.NetPolicy != nil {
		return nil, nil, errLandlockAllowlist
	}
	abi := landlock.ABI()
	if err := landlock.ABIError(abi); err != nil {
		return nil, nil, fmt.Errorf("%w: landlock: %w", ErrNoBackend, err)
	}
	plan, err := landlockPlan(canon)
	if err != nil {
		return nil, nil, fmt.Errorf("landlock: %w", err)
	}
	argv := append([]string{c.Path}, c.Args[1:]...)
	spec := landlock.Spec{
		Plan:    plan,
		Network: c.Network,
		Path:    argv[0],
		Argv:    argv,
		Files:   len(c.ExtraFiles),
		Closed:  nilFiles(c.ExtraFiles),
		Weaken:  testhook.LandlockWeaken,
	}
	if !testhook.SkipSeccomp {
		spec.Seccomp = bwrap.Program(landlockRules(c.Network))
		if testhook.Seccomp != nil {
			spec.Seccomp = testhook.Seccomp(c.Network)
		}
	}
	cmd, specFile, err := landlock.Command(ctx, &spec, len(c.ExtraFiles))
	if err != nil {
		return nil, nil, err
	}
	attr := cmd.SysProcAttr
	c.wire(cmd, env)
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = append(cmd.ExtraFiles, specFile)
	// The command is this process's child (the init execs it): this
	// process stays, to reap what the command leaves behind.
	c.handoff = false
	if c.KillLeftovers {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			specFile.Close()
			return nil, nil, fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
		}
		c.leftovers = true
	}
	return cmd, func() { specFile.Close() }, nil
}

// landlockRules are the seccomp rules of a landlock sandbox: the host's
// network's sockets with the network on; with it off no AF_INET,
// AF_INET6 or AF_UNIX at all (there is no network namespace of its own
// to keep them in); never a new user namespace, which would give the
// command every capability inside it and a mount namespace to undo the
// view with.
func landlockRules(network bool) bwrap.Rules {
	s := bwrap.SocketsNoNamespace()
	if network {
		s = bwrap.SocketsFor(true)
	}
	r := bwrap.RulesFor(s)
	r.NoUserns = true
	return r
}
