package launcher

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

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
// keeper (landlock/keeper_linux.go): no mounts, no stub
// registry, no namespaces.
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
			if mg, err = newMetaGate(plan, canon, proxy); err != nil {
				c.stopNet()
				return nil, nil, err
			}
			mg.spec = &spec
			rules = gate.Rules(rules)
			// The entry gate: names made, removed, renamed or linked
			// where the plan froze a directory (gate).
			rules = gate.EntryRules(rules)
			if c.NetPolicy != nil {
				rules = gate.ConnectRules(rules) // after Rules, which replaces Notify
			}
			if !c.Network {
				// The sandbox's own Unix sockets: bind and connect
				// decided by the gate (gate.UnixRules).
				rules = gate.UnixRules(rules)
			}
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

// metaGate is the launcher's end of a landlock sandbox's metadata gate.
type metaGate struct {
	plan          *landlock.Plan
	entries       landlockEntries
	proxy         netip.AddrPort // with an allowlist: where connects may go
	spec          *landlock.Spec // the sandbox's: the gate binds its sockets on a thread confined by it
	id            gate.Identity
	mine, theirs  *os.File // the socket the init sends the listener on
	cancel        context.CancelFunc
	mu            sync.Mutex
	started, done bool
}

func newMetaGate(plan *landlock.Plan, canon *policy.Canonical, proxy netip.AddrPort) (*metaGate, error) {
	id, err := gate.Self()
	if err != nil {
		return nil, err
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("metadata gate: socketpair: %w", err)
	}
	return &metaGate{plan: plan, entries: newLandlockEntries(plan, canon), proxy: proxy, id: id, mine: os.NewFile(uintptr(sp[0]), "metagate"),
		theirs: os.NewFile(uintptr(sp[1]), "metagate")}, nil
}

// serve, once the init has started, takes the listener it sends and
// decides each gated call by the plan until the sandbox is gone or stop.
// Nothing arrives when the init failed before installing its filter: it
// exits with its own reason (125), which Wait reports.
func (g *metaGate) serve(stderr io.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	g.started = true
	g.theirs.Close() // only the init holds it now: EOF once it is gone
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	sock := g.mine
	d := gateDecider{gate.Funcs{Change: g.entries.mayChangeMeta, Read: g.plan.MayReadMeta}, g.entries, g.proxy, g.spec}
	go func() {
		defer sock.Close()
		l, err := gate.RecvFd(int(sock.Fd()))
		if err != nil {
			return
		}
		if err := gate.Serve(ctx, l, d, g.id); err != nil && ctx.Err() == nil && stderr != nil {
			fmt.Fprintf(stderr, "cordon: metadata gate: %v; the sandbox's chmod, chown, xattr, utimes, inotify_add_watch and connect calls, and what it makes, removes or renames where the plan froze a directory, now fail\n", err)
		}
	}()
}

// stop ends the gate at the end of the run: later gated calls of
// anything left behind fail (ENOSYS).
func (g *metaGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		g.cancel()
	}
}

// close releases what a launch that never started holds.
func (g *metaGate) close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	if g.cancel != nil {
		g.cancel()
	}
	if !g.started {
		g.mine.Close()
		g.theirs.Close()
	}
}
