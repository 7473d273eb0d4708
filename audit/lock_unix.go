//go:build unix

package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// lock takes the lock of the log at path, exclusive for appends, shared
// for a verify (which must not see a record without its anchor).
//
// The lock is not taken on the log itself: a log the user names is
// readable inside the sandboxes launched beside it (read-only, not
// denied), and flock needs no write access, so a sandboxed process could
// hold the log's lock for as long as it runs and every hook call would
// wait on it (Claude Code lets a tool call through when its hook times
// out or is killed: a stalled hook is a Bash command run outside the
// sandbox). The lock is a file in cordon's state directory instead,
// named like cordon's own anchor of the log, which no sandbox can open.
func lock(path string, exclusive bool) (*os.File, error) {
	dir, err := state.Sub(state.Audit)
	if err == nil {
		dir = filepath.Join(dir, "locks")
		err = state.Private(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("lock of %s: %w", path, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, keptName(path)), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func unlock(f *os.File) {
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}
