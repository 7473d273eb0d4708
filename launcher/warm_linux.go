package launcher

import (
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/cordon-sandbox/cordon/internal/spawn"
	"github.com/cordon-sandbox/cordon/native"
)

// StartWarm starts a native init for a later launch with this network
// setting and these standard streams (each an *os.File or nil). It fails
// where the native backend cannot start; the launch then goes as it
// would have.
func StartWarm(network bool, stdin io.Reader, stdout, stderr io.Writer) (*Warm, error) {
	files := []any{stdin, stdout, stderr}
	for _, f := range files {
		if _, ok := f.(*os.File); f != nil && !ok {
			return nil, errNotFile
		}
	}
	cmd, recv, send, err := native.CommandPending(network, 0)
	if err != nil {
		return nil, err
	}
	defer recv.Close()
	nativeWeaken(cmd.SysProcAttr)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{recv}
	if err := spawn.Start(cmd); err != nil {
		send.Close()
		return nil, err
	}
	return &Warm{cmd: cmd, send: send, network: network, stdin: stdin, stdout: stdout, stderr: stderr}, nil
}

// startInner starts the sandbox's process, or gives the init started
// ahead its spec.
func (c *Cmd) startInner(inner *exec.Cmd) error {
	if c.warm == nil {
		return spawn.Start(inner)
	}
	if err := native.Send(c.warm.send, c.warmSpec); err != nil {
		inner.Process.Kill()
		inner.Wait()
		return fmt.Errorf("sandbox init: %w", err)
	}
	return nil
}
