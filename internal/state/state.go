// Package state finds cordon's per-user state directory: the one place
// where cordon keeps what a later launch trusts (the detection verdict, the
// nested-repository scan, the masks, the audit key) and
// the private TMPDIRs and caches it hands to sandboxes.
//
// Nothing a sandbox writes may weaken a later launch (docs/threat-model.md,
// classes 11 and 14), so the directory is chosen from facts a sandbox
// cannot change, and the launcher denies it inside every sandbox:
//
//   - its place comes from the password database's home directory for the
//     real uid, never from $HOME, $XDG_*, or $TMPDIR, which differ between
//     launches: a launch with another HOME would protect another directory
//     and leave this one writable;
//   - it is <home>/.local/state/cordon when that home is a directory owned
//     by the user (no other user can create it there first), else
//     /tmp/cordon-<uid> (a user without a home, such as a system account);
//   - it is created 0700, must be a real directory (not a symlink) owned by
//     the user; a mode a sandbox loosened is repaired, a squatter's
//     directory is refused with the fix.
//
// CORDON_STATE_DIR overrides the place (tests, unusual setups); it must be
// absolute, and the same checks apply.
package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// EnvDir names an explicit state directory.
const EnvDir = "CORDON_STATE_DIR"

// Subdirectories of the state directory.
const (
	Run   = "run"   // masks, the empty mask file
	Scan  = "scan"  // nested-repository scan cache
	Tmp   = "tmp"   // private TMPDIRs, one per workspace
	Cache = "cache" // private package and build caches, one per workspace
	Audit = "audit" // default audit logs and the audit key
)

// Path is the state directory of the current user, without creating it.
func Path() string { return PathFor(os.Getuid()) }

// PathFor is the state directory of uid (the override applies only to the
// current user).
func PathFor(uid int) string {
	if uid == os.Getuid() {
		if d := os.Getenv(EnvDir); filepath.IsAbs(d) {
			return filepath.Clean(d)
		}
	}
	if home := homeOf(uid); home != "" {
		return filepath.Join(home, ".local", "state", "cordon")
	}
	return filepath.Join("/tmp", "cordon-"+strconv.Itoa(uid))
}

// Places are the state directories of the current user other than the
// one in use (Path) that exist as directories of the user's: the two
// defaults (<home>/.local/state/cordon and /tmp/cordon-<uid>), which one
// is in use changing when the home appears or goes. What an earlier
// launch kept in one (an audit key, another workspace's TMPDIR) is no
// less private for being left behind, so the launcher denies each of
// them as it denies Path. One that holds Path, or lies in it, is left
// out: the deny of Path covers it, and a deny above Path would hide it.
func Places() []string {
	cur := Path()
	uid := os.Getuid()
	cand := []string{filepath.Join("/tmp", "cordon-"+strconv.Itoa(uid))}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && filepath.IsAbs(u.HomeDir) && u.HomeDir != "/" {
		cand = append(cand, filepath.Join(filepath.Clean(u.HomeDir), ".local", "state", "cordon"))
	}
	var out []string
	for _, d := range cand {
		if d == cur || strings.HasPrefix(cur, d+"/") || strings.HasPrefix(d, cur+"/") {
			continue
		}
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue // another user's: not this user's state to keep
		}
		out = append(out, d)
	}
	return out
}

// homeOf returns uid's home from the password database when it is a real
// directory owned by uid (root's home is owned by root), else "".
func homeOf(uid int) string {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil || !filepath.IsAbs(u.HomeDir) || u.HomeDir == "/" {
		return ""
	}
	fi, err := os.Lstat(u.HomeDir)
	if err != nil || !fi.IsDir() {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}

// Dir returns the state directory, created and checked.
func Dir() (string, error) {
	d := Path()
	if err := ensure(d, true); err != nil {
		return "", fmt.Errorf("cordon state directory: %w", err)
	}
	return d, nil
}

// Sub returns the subdirectory name of the state directory, created and
// checked like the directory itself.
func Sub(name string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	sub := filepath.Join(d, name)
	if err := Private(sub); err != nil {
		return "", fmt.Errorf("cordon state directory: %w", err)
	}
	return sub, nil
}

// Private makes sure dir is a directory of the current user with mode 0700,
// creating it (its parent must exist) and repairing a loosened mode: a
// sandbox can chmod its own TMPDIR, and that must not make later launches
// fail. A symlink, a non-directory or another owner is an error.
func Private(dir string) error { return ensure(dir, false) }

func ensure(dir string, parents bool) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrNotExist) && parents {
		if err = os.MkdirAll(filepath.Dir(dir), 0o700); err == nil {
			err = os.Mkdir(dir, 0o700)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink; cordon keeps private state only in a real directory: remove it and retry", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory: remove it and retry", dir)
	case !ok || int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d): another user may have created it first; remove it as root, or set %s to a directory of yours", dir, st.Uid, os.Getuid(), EnvDir)
	}
	if fi.Mode().Perm() != 0o700 {
		// Our own directory with a loosened (or emptied) mode: repair it,
		// through a descriptor opened without following links, so a swap
		// between the check and the chmod changes nothing else.
		if err := chmodNoFollow(dir, fi); err != nil {
			return fmt.Errorf("repair mode of %s: %w", dir, err)
		}
	}
	return nil
}
