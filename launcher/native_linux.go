package launcher

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"syscall"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/native"
	"github.com/cordon-sandbox/cordon/policy"
)

// nativeCmd renders the policy with the bwrap renderer (the same mounts,
// masks, stubs and seccomp program) and starts this program as the
// sandbox's init (package native); the caller holds reg's lock.
func (c *Cmd) nativeCmd(ctx context.Context, canon *policy.Canonical, res detect.Result, env []string, reg *registry) (*exec.Cmd, func(), error) {
	empty, err := emptyFile()
	if err != nil {
		return nil, nil, err
	}
	opts := bwrap.Options{
		Network:   c.Network,
		EmptyFile: empty,
		MaskRoot:  maskRootPath(),
		Chdir:     c.Dir,
		Stat:      reg.stat(canon.Stat),
	}
	if c.NetPolicy != nil {
		s := bwrap.SocketsProxy()
		opts.Sockets = &s
	}
	plan, err := bwrap.Render(canon, opts)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{c.Path}, c.Args[1:]...)
	ctty := false
	if c.Tty {
		// The init starts the command in a session of its own with the
		// pty as its controlling terminal: no helper to exec inside.
		// (Under the SkipTtyPty mutation the pty is the caller's terminal,
		// which the helper only warns about; it keeps that path.)
		if testhook.SkipTtyPty {
			argv = c.ttyArgv(canon, argv)
		} else {
			ctty = true
		}
		c.ttyInBwrap = true
	}
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
		ProxyFd:       3 + files,
		Ctty:          ctty,
		CttyFd:        c.ttyCtty(),
	}
	if !testhook.SkipSeccomp {
		spec.Seccomp = plan.Seccomp
		if testhook.Seccomp != nil {
			spec.Seccomp = testhook.Seccomp(c.Network)
		}
	}
	for _, m := range plan.Mounts {
		nm := native.Mount{Path: m.Path, Src: m.Src, Readonly: m.Readonly(), What: mountWhat[m.Kind]}
		// A root is mounted only if it is still the file the policy was
		// resolved to, as bwrap's --bind-fd checks.
		if (m.Kind == bwrap.MountBind || m.Kind == bwrap.MountReadonly) && !testhook.SkipIdentityCheck {
			if id, existed := canon.ID(m.Path); existed {
				nm.Dev, nm.Ino = id.Dev, id.Ino
			}
		}
		spec.Mounts = append(spec.Mounts, nm)
	}
	switch spec.Weaken = testhook.NativeWeaken; spec.Weaken {
	case "ancestor-pins":
		spec.Mounts = slices.DeleteFunc(spec.Mounts, func(m native.Mount) bool { return m.What == "pin" })
	case "mask-readonly":
		for i := range spec.Mounts {
			if spec.Mounts[i].What == "mask" {
				spec.Mounts[i].Readonly = false
			}
		}
	case "depth-order":
		slices.Reverse(spec.Mounts)
	}
	if err := ensureMasks(plan.Masks); err != nil {
		return nil, nil, err
	}
	if err := reg.acquire(plan.Stubs, c.StubLinger, writableRoots(canon)); err != nil {
		return nil, nil, err
	}
	release := func() {
		if len(reg.mine) == 0 {
			return
		}
		r, err := lockRegistry(reg.dir)
		if err != nil {
			return
		}
		r.me, r.mine, r.reaped = reg.me, reg.mine, reg.reaped
		r.release()
		r.unlock()
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
	cmd, specFile, err := native.Command(ctx, &spec, c.Network, passed)
	if err != nil {
		c.stopNet()
		release()
		return nil, nil, err
	}
	attr := cmd.SysProcAttr
	if testhook.NativeWeaken == "pid-namespace" {
		attr.Cloneflags &^= syscall.CLONE_NEWPID
	}
	c.wire(cmd, env)
	cmd.SysProcAttr = attr
	cmd.Dir = "" // the init's chdir decides inside
	if netEnd != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, netEnd)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, specFile)
	return cmd, func() { specFile.Close(); release() }, nil
}

var mountWhat = map[bwrap.MountKind]string{
	bwrap.MountPin: "pin", bwrap.MountBind: "bind", bwrap.MountReadonly: "read-only bind",
	bwrap.MountMaskDir: "mask", bwrap.MountMaskFile: "mask",
}
