package landlock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/memfd"

	"golang.org/x/sys/unix"
)

// ABI is the best Landlock ABI this kernel offers to this process, 0
// when it has none (not built in, not in the boot's lsm= list, or
// refused by a seccomp profile around cordon).
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || int(v) < 0 {
		return 0
	}
	return int(v)
}

// ABIError says why this kernel's Landlock (ABI, 0 for none) cannot carry
// the backend, with the fix; nil when it can.
func ABIError(abi int) error {
	switch {
	case abi >= MinABI:
		return nil
	case abi == 1:
		return fmt.Errorf("landlock ABI 1 only (Linux 5.13 to 5.18): it refuses every rename and link between directories; the landlock backend needs ABI %d (Linux 6.2 or later)", MinABI)
	case abi == 2:
		return fmt.Errorf("landlock ABI 2 only (Linux 5.19 to 6.1): it does not control truncation, so a read-only file could be emptied; the landlock backend needs ABI %d (Linux 6.2 or later)", MinABI)
	}
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	_ = v
	switch errno {
	case unix.EOPNOTSUPP:
		return errors.New("landlock is built into this kernel but off: add landlock to the lsm= boot option (e.g. lsm=landlock,lockdown,yama,integrity,apparmor) and reboot")
	case unix.ENOSYS:
		return errors.New("this kernel has no Landlock (CONFIG_SECURITY_LANDLOCK, Linux 5.13 or later), or a seccomp profile around cordon refuses its calls")
	}
	return fmt.Errorf("landlock is unavailable here (landlock_create_ruleset: %v)", errno)
}

// Command is the init of a sandbox for spec: this program, started from
// the running executable whatever has happened to its path since, with
// the spec on the descriptor after extraFiles. It starts the command
// confined and stays above it (the keeper, keeper_linux.go), in a session
// of its own, killed when the thread that starts it ends until it watches
// its parent, and then ending the whole sandbox when its parent ends. Its
// exit status is the command's. The caller closes specFile once the
// process has started.
func Command(ctx context.Context, spec *Spec, extraFiles int) (cmd *exec.Cmd, specFile *os.File, err error) {
	data, err := spec.Encode()
	if err != nil {
		return nil, nil, err
	}
	specFile, err = memfd.Sealed("cordon-landlock-spec", data)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = []string{"cordon-landlock", InitArg, strconv.Itoa(3 + extraFiles)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, specFile, nil
}

// Probe confines the init with a domain that grants one file of a fresh
// directory (every right of the ABI handled, the network and scopes as a
// launch with the network off has them, a seccomp program that allows
// everything: the mechanism is what is probed) and reports why it could
// not, or why the domain did not hold. abi is the ABI it found.
func Probe(ctx context.Context, timeout time.Duration) (abi int, err error) {
	abi = ABI()
	if err := ABIError(abi); err != nil {
		return abi, err
	}
	dir, done, err := makeProbeDir()
	if err != nil {
		return abi, err
	}
	defer done()
	granted := filepath.Join(dir, "granted")
	if err := os.WriteFile(granted, []byte("ok\n"), 0o600); err != nil {
		return abi, fmt.Errorf("probe file: %w", err)
	}
	// BPF_RET|BPF_K SECCOMP_RET_ALLOW
	allow := []byte{0x06, 0, 0, 0, 0, 0, 0xff, 0x7f}
	spec := &Spec{Probe: dir, Seccomp: allow, Plan: &Plan{ABI: abi, HandledFS: HandledFS(abi),
		Rules: []Rule{{Path: granted, Access: ReadFile}}}}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, f, err := Command(tctx, spec, 0)
	if err != nil {
		return abi, err
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
		return abi, fmt.Errorf("the probe did not finish in %s", timeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if msg == "" || !errors.As(err, &ee) {
			msg = err.Error()
		}
		return abi, errors.New(strings.TrimPrefix(msg, "cordon: sandbox: "))
	}
	return abi, nil
}
