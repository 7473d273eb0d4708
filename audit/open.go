package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/safefs"
)

// A log the user names may lie where a sandbox can write (a workspace,
// a HOME inside one). Between two appends the sandbox can replace the log,
// its anchor, or any directory above them with a symlink to a file it may
// not write (~/.bashrc), and the next append would land there. So a named
// log is reached from / through internal/safefs: the kernel refuses a
// symlink anywhere on the way at the moment of the open, and once a
// directory is open, what is renamed around it no longer matters
// (docs/threat-model.md, class 11).

// ErrSymlink is wrapped by the error for a log path with a symlink in it.
var ErrSymlink = errors.New("symlink in the path")

// openDir opens the absolute directory dir without following a symlink at
// any component.
func openDir(dir string) (*safefs.Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("open %s: not an absolute path", dir)
	}
	r, err := safefs.OpenRoot(dir)
	return r, describe(err)
}

// openLogDir opens the directory of a log to write. It never makes it: a
// missing directory of a log the user named is more likely a typo than a
// wish for a new tree; cordon's own logs are in the state directory,
// which DefaultPath makes.
func openLogDir(dir string) (*safefs.Root, error) {
	r, err := openDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("directory %s: %w (cordon creates no directory for a log you name)", dir, fs.ErrNotExist)
	}
	return r, err
}

// describe turns an error of safefs into one that says what is there: a
// symlink wraps ErrSymlink and says what the real path would be; any other
// failure is an "open" of the path (whichever way safefs went about it).
func describe(err error) error {
	var le *safefs.LinkError
	var pe *fs.PathError
	switch {
	case errors.As(err, &le):
	case errors.As(err, &pe):
		return &fs.PathError{Op: "open", Path: pe.Path, Err: pe.Err}
	default:
		return err
	}
	msg := fmt.Sprintf("%s is a symlink; cordon opens audit logs and keys only by their real path, never through a link", le.Link)
	if real, rerr := filepath.EvalSymlinks(le.Link); rerr == nil {
		msg += " (here: " + real + ")"
	}
	return fmt.Errorf("%s: %w", msg, ErrSymlink)
}

// linkErr is the error of opening a final component with O_NOFOLLOW:
// ELOOP there means a symlink.
func linkErr(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("it is a symlink: %w", ErrSymlink)
	}
	return err
}

// Access modes of openAt.
const (
	rdonly     = os.O_RDONLY
	rdwr       = os.O_RDWR
	appendMode = os.O_RDWR | os.O_APPEND
)

// openAt opens name in dir with mode (rdonly, rdwr, appendMode), without
// following a symlink and without blocking on a FIFO or taking a
// terminal, creating it (0600, only if absent) with create.
func openAt(dir *safefs.Root, name string, mode int, create bool) (*os.File, error) {
	f, err := dir.OpenFile(name, mode, 0)
	if errors.Is(err, fs.ErrNotExist) && create {
		f, err = dir.OpenFile(name, mode|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) { // another process made it first
			f, err = dir.OpenFile(name, mode, 0)
		}
	}
	if err != nil {
		return nil, describe(err)
	}
	return f, nil
}

// checkFile requires f to be a regular file; mine also requires it to be
// the current user's with one link (a second name may be a file the user
// never meant cordon to write).
func checkFile(f *os.File, mine bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v)", f.Name(), fi.Mode().Type())
	case mine && st.Nlink != 1:
		return fmt.Errorf("%s has %d hard links; cordon writes only a file with one name", f.Name(), st.Nlink)
	case mine && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", f.Name(), st.Uid, os.Geteuid())
	}
	return nil
}

const nofollow = unix.O_NOFOLLOW
