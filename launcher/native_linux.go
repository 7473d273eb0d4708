package launcher

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/native"
	"github.com/cordon-sandbox/cordon/policy"
)

// nativeCmd renders the policy with the bwrap renderer (the same mounts,
// masks and seccomp program) and starts this program as the sandbox's
// init (package native).
func (c *Cmd) nativeCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string) (*exec.Cmd, func(), error) {
	opts, err := c.renderOptions(canon)
	if err != nil {
		return nil, nil, err
	}
	opts.MountsOnly = true
	plan, err := bwrap.Render(canon, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := mountBudget(len(plan.Mounts)); err != nil {
		return nil, nil, err
	}
	argv, ctty := c.nativeArgv(canon)
	// With a network allowlist the sandbox's end of the proxy's socket
	// pair follows the caller's ExtraFiles, as under bwrap (net_linux.go).
	// The init itself makes the proxy's listener inside and hands it out
	// (native.Spec.ProxyPort): the helper argv newNetSession gives bwrap
	// is not needed.
	var netEnd *os.File
	if c.NetPolicy != nil {
		if c.net, netEnd, _, env, err = c.newNetSession(canon, argv, env, 3+len(c.ExtraFiles), c.stderrFor()); err != nil {
			return nil, nil, err
		}
	}
	files := len(c.ExtraFiles)
	spec := c.nativeSpec(canon, plan, argv, ctty)
	if err := prepareMountPoints(plan, canon); err != nil {
		return nil, nil, err
	}
	// This process stays the sandbox's parent: the namespaces are made
	// as it starts the init.
	c.handoff = false
	if netEnd != nil {
		spec.ProxyPort = ProxyPort
	}
	passed := files
	if netEnd != nil {
		passed++
	}
	if c.exiting {
		spec.StatusFd = 3 + passed + 1
	}
	// The entry gate: the names the model protects that do not exist
	// are kept by the gate, not by mount points in the project.
	var mg *metaGate
	if gated() {
		if mg, err = newMetaGate(rootedEntries{hostSockets: c.hosts, canon: canon, diag: -1}); err != nil {
			c.stopNet()
			return nil, nil, err
		}
		spec.Seccomp = bwrap.Program(rootedRules(plan.Rules, c.hosts.unixGated()))
		spec.Gate = 3 + passed + 1
		if c.exiting {
			spec.Gate++
		}
	}
	cmd, specFile, err := native.Command(ctx, &spec, c.Network, passed)
	if err != nil {
		mg.close()
		c.stopNet()
		return nil, nil, err
	}
	attr := cmd.SysProcAttr
	if slices.Contains(strings.Split(testhook.NativeWeaken, ","), "pid-namespace") {
		attr.Cloneflags &^= syscall.CLONE_NEWPID
	}
	c.wire(cmd, env)
	cmd.SysProcAttr = attr
	cmd.Dir = "" // the init's chdir decides inside
	if netEnd != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, netEnd)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, specFile)
	if c.exiting {
		// The init reports the command's status on the descriptor after
		// the spec's (Exec, reported).
		if c.status, c.statusW, err = os.Pipe(); err != nil {
			mg.close()
			c.stopNet()
			specFile.Close()
			return nil, nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, c.statusW)
	}
	if mg != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, mg.theirs)
		c.afterStart = func() { mg.serve(c.stderrFor()) }
		c.stopGate = mg.stop
	}
	return cmd, func() { specFile.Close(); mg.close() }, nil
}

// nativeArgv is the command's argv and whether the init gives it the pty
// as its controlling terminal.
func (c *Cmd) nativeArgv(canon *policy.Canonical) (argv []string, ctty bool) {
	argv = append([]string{c.Path}, c.Args[1:]...)
	if !c.Tty {
		return argv, false
	}
	c.ttyInBwrap = true
	// The init starts the command in a session of its own with the pty
	// as its controlling terminal: no helper to exec inside. (Under the
	// SkipTtyPty mutation the pty is the caller's terminal, which the
	// helper only warns about; it keeps that path.)
	if testhook.SkipTtyPty {
		return c.ttyArgv(canon, argv), false
	}
	return argv, true
}

// nativeSpec is what the init does, from the plan bwrap would have been
// given.
func (c *Cmd) nativeSpec(canon *policy.Canonical, plan *bwrap.Plan, argv []string, ctty bool) native.Spec {
	files := len(c.ExtraFiles)
	spec := native.Spec{
		RootWritable:  canon.Access("/", policy.Write),
		ProcReadonly:  bwrap.ProcReadonly,
		ProcMasked:    bwrap.ProcMasked,
		Network:       c.Network,
		DisableUserns: true,
		Chdir:         c.Dir,
		Path:          argv[0],
		Argv:          argv,
		Files:         files,
		Closed:        nilFiles(c.ExtraFiles),
		ProxyFd:       3 + files,
		Ctty:          ctty,
		CttyFd:        c.ttyCtty(),
		Mounts:        nativeMounts(canon, plan.Mounts),
	}
	if !testhook.SkipSeccomp {
		spec.Seccomp = plan.Seccomp
		if testhook.Seccomp != nil {
			spec.Seccomp = testhook.Seccomp(c.Network)
		}
	}
	spec.Weaken = testhook.NativeWeaken
	spec.Mounts = weakenMounts(spec.Weaken, spec.Mounts)
	return spec
}

// nativeMounts translates the plan's mounts for the init.
func nativeMounts(canon *policy.Canonical, mounts []bwrap.Mount) []native.Mount {
	out := make([]native.Mount, 0, len(mounts))
	for _, m := range mounts {
		nm := native.Mount{Path: m.Path, Src: m.Src, Readonly: m.Readonly(), What: mountWhat[m.Kind]}
		// A root is mounted only if it is still the file the policy was
		// resolved to, as bwrap's --bind-fd checks.
		if (m.Kind == bwrap.MountBind || m.Kind == bwrap.MountReadonly) && !testhook.SkipIdentityCheck {
			if id, existed := canon.ID(m.Path); existed {
				nm.Dev, nm.Ino = id.Dev, id.Ino
			}
		}
		out = append(out, nm)
	}
	return out
}

// weakenMounts applies the conformance suite's mutation weaken (none
// outside it) to the init's mount list.
func weakenMounts(weaken string, mounts []native.Mount) []native.Mount {
	for _, w := range strings.Split(weaken, ",") {
		mounts = weakenMountsBy(w, mounts)
	}
	return mounts
}

func weakenMountsBy(weaken string, mounts []native.Mount) []native.Mount {
	switch weaken {
	case "ancestor-pins":
		mounts = slices.DeleteFunc(mounts, func(m native.Mount) bool { return m.What == "pin" })
	case "mask-readonly":
		for i := range mounts {
			if mounts[i].What == "mask" {
				mounts[i].Readonly = false
			}
		}
	case "depth-order":
		slices.Reverse(mounts)
	}
	return mounts
}

var mountWhat = map[bwrap.MountKind]string{
	bwrap.MountPin: "pin", bwrap.MountBind: "bind", bwrap.MountReadonly: "read-only bind",
	bwrap.MountMaskDir: "mask", bwrap.MountMaskFile: "mask", bwrap.MountSubst: "private /tmp",
}

// nilFiles are the descriptors the caller's nil ExtraFiles entries stand
// for, which the command must get closed.
func nilFiles(extra []*os.File) []int {
	var fds []int
	for i, f := range extra {
		if f == nil {
			fds = append(fds, 3+i)
		}
	}
	return fds
}
