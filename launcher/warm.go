package launcher

import (
	"errors"
	"io"
	"os"
	"os/exec"
)

// Warm is a native sandbox's init started ahead of its launch (StartWarm),
// so that its start, a fork into new namespaces and a start of this
// program, overlaps the caller's work before the launch, such as
// composing the policy. Until a launch gives it its spec, it waits in
// its namespaces having done nothing; it is not yet a sandbox, and has
// nothing to run.
//
// A Cmd takes it (Cmd.Warm) when its launch is the one the init was
// started for: the native backend, the same Network and standard
// streams, no Tty, network allowlist or ExtraFiles, no context, Cancel or
// WaitDelay. Any other launch ends it and starts its own init. Close ends
// one that no Cmd took; after a Cmd took it, Close does nothing.
type Warm struct {
	cmd     *exec.Cmd
	send    *os.File // the spec's pipe
	network bool
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	taken   bool
}

// Close ends the init unless a Cmd took it. A nil Warm is allowed.
func (w *Warm) Close() error {
	if w == nil || w.taken || w.cmd == nil {
		return nil
	}
	w.taken = true
	w.send.Close() // without a spec the init exits, building nothing
	w.cmd.Process.Kill()
	w.cmd.Wait()
	return nil
}

// fits reports whether c's launch may take w.
func (w *Warm) fits(c *Cmd) bool {
	return w != nil && !w.taken && w.network == c.Network && !c.Tty && c.NetPolicy == nil &&
		len(c.ExtraFiles) == 0 && c.ctx == nil && c.Cancel == nil && c.WaitDelay == 0 &&
		c.Stdin == w.stdin && c.Stdout == w.stdout && c.Stderr == w.stderr
}

var (
	errNotFile = errors.New("a standard stream is not a file")
	errNoWarm  = errors.New("no native backend on this system")
)
