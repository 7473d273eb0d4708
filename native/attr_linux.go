package native

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/memfd"

	"golang.org/x/sys/unix"
)

// Attr makes the init pid 1 of new user, mount, pid, ipc, uts and cgroup
// namespaces (and network, unless network), as the caller's own user and
// group (as bwrap maps them), with every capability it has inside them
// kept across its exec, and killed when its parent ends.
func Attr(network bool) *syscall.SysProcAttr {
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP)
	if !network {
		flags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	var caps []uintptr
	if uid != 0 {
		// Another uid than 0 loses its capabilities at execve unless
		// they are ambient.
		for c := 0; c <= lastCap(); c++ {
			caps = append(caps, uintptr(c))
		}
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: caps,
		Pdeathsig:   syscall.SIGKILL,
	}
}

// lastCap is the highest capability number of the running kernel.
func lastCap() int {
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return unix.CAP_LAST_CAP
}

// Command is the init of a sandbox for spec: this program, started from
// the running executable whatever has happened to its path since, with
// the spec on the descriptor after extraFiles. The caller closes specFile
// once the process has started.
func Command(ctx context.Context, spec *Spec, network bool, extraFiles int) (cmd *exec.Cmd, specFile *os.File, err error) {
	data, err := spec.Encode()
	if err != nil {
		return nil, nil, err
	}
	specFile, err = memfd.Sealed("cordon-spec", data)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{InitName, InitArg, strconv.Itoa(3 + extraFiles)}
	cmd.SysProcAttr = Attr(network)
	return cmd, specFile, nil
}

// Probe builds a sandbox with every feature a launch uses (the
// namespaces, a read-only "/", /proc, /dev, the pivot, the capability
// drop, nested user namespaces disabled, a seccomp filter: one that
// allows everything, the mechanism is what is probed) and reports why it
// could not.
func Probe(ctx context.Context, timeout time.Duration) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// BPF_RET|BPF_K SECCOMP_RET_ALLOW
	allow := []byte{0x06, 0, 0, 0, 0, 0, 0xff, 0x7f}
	spec := &Spec{Probe: true, DisableUserns: true, Seccomp: allow,
		ProcReadonly: []string{"/proc/sys"}, ProcMasked: []string{"/proc/keys"}}
	cmd, f, err := Command(tctx, spec, false, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{f}
	cmd.WaitDelay = 250 * time.Millisecond
	err = cmd.Run()
	switch {
	case tctx.Err() != nil:
		return fmt.Errorf("the probe did not finish in %s", timeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if msg == "" || !errors.As(err, &ee) {
			msg = err.Error()
		}
		return errors.New(msg)
	}
	return nil
}
