package launcher

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/gate"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/policy"
)

// landlockCmd starts this program as the landlock backend's init
// (package landlock), which confines itself with the plan rendered from
// the policy, starts the command and stays above it as the sandbox's
// keeper (landlock/keeper_linux.go): no mounts, no namespaces.
func (c *Cmd) landlockCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	if err := landlock.ABIError(landlockABI()); err != nil {
		return nil, nil, fmt.Errorf("%w: landlock: %w", ErrNoBackend, err)
	}
	plan, err := landlockPlan(canon)
	if err != nil {
		return nil, nil, err
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
	// A network allowlist: the proxy on a free port of the host's
	// loopback (net_tcp.go), the only TCP port Landlock lets the command
	// connect to, and the gate connects each socket there itself.
	var proxy netip.AddrPort
	if c.NetPolicy != nil {
		var port int
		if c.net, port, env, err = c.newNetSessionTCP(canon, env, c.stderrFor()); err != nil {
			return nil, nil, err
		}
		proxy = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))
		spec.ProxyPort = port
	}
	// The metadata gate: Landlock does not cover chmod, chown, extended
	// attributes or file times, so the filter hands those calls to this
	// process, which decides them by the plan (gate).
	var mg *metaGate
	if !testhook.SkipSeccomp {
		rules := landlockRules(c.Network)
		if c.NetPolicy != nil {
			rules = landlockProxyRules()
		}
		if testhook.Seccomp == nil && !weakened(testhook.LandlockWeaken, "metagate") {
			entries := newLandlockEntries(plan, canon)
			d := gateDecider{gate.Funcs{Change: entries.mayChangeMeta, Read: plan.MayReadMeta}, entries, proxy, &spec, c.hosts}
			if mg, err = newMetaGate(d); err != nil {
				c.stopNet()
				return nil, nil, err
			}
			rules = landlockGatedRules(c.Network, c.NetPolicy != nil, c.hosts.unixGated(), plan.ABI)
			spec.Gate = 3 + len(c.ExtraFiles) + 1 // after the spec
		}
		spec.Seccomp = bwrap.Program(rules)
		if testhook.Seccomp != nil {
			spec.Seccomp = testhook.Seccomp(c.Network)
		}
	}
	cmd, specFile, err := landlock.Command(ctx, &spec, len(c.ExtraFiles))
	if err != nil {
		mg.close()
		c.stopNet()
		return nil, nil, err
	}
	attr := cmd.SysProcAttr
	c.wire(cmd, env)
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = append(cmd.ExtraFiles, specFile)
	if mg != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, mg.theirs)
		c.afterStart = func() { mg.serve(c.stderrFor()) }
		c.stopGate = mg.stop
	}
	// The init stays above the command as its keeper, which ends the
	// sandbox when this process ends: this process stays too (the
	// keeper watches it), and reaps what a killed keeper left behind.
	c.handoff = false
	if c.KillLeftovers {
		tasks, err := openLeftovers()
		if err != nil {
			specFile.Close()
			mg.close()
			c.stopNet()
			return nil, nil, err
		}
		c.leftovers = tasks
	}
	return cmd, func() { specFile.Close(); mg.close() }, nil
}

// weakened reports whether the comma list steps names step.
func weakened(steps, step string) bool {
	return slices.Contains(strings.Split(steps, ","), step)
}
