// Package closeddir explains a path that cordon cannot look up because a
// directory on its way is closed to this user, and tells a missing path
// that this user could not create either (another user's directory).
package closeddir

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ToUser reports whether the missing path p is out of this user's
// reach: its nearest existing ancestor belongs to another user and does
// not let this one write. A sandbox runs as this user and cannot create p
// there either, nor make that directory writable (only its owner can
// chmod it), so a derived root at p restricts nothing, while its mount
// point would be a directory this user cannot make: the launch would
// fail (a workspace holding another user's repository, /tmp with
// someone else's clone in it). For root nothing is out of reach.
func ToUser(p string) bool {
	uid := getuid()
	if uid == 0 {
		return false
	}
	for a := filepath.Dir(p); ; a = filepath.Dir(a) {
		fi, err := os.Lstat(a)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			return ok && fi.IsDir() && int(st.Uid) != uid && unix.Access(a, unix.W_OK) != nil
		}
		if a == "/" {
			return false
		}
	}
}

// getuid is this process's uid, asked once (a workspace of many
// repositories has a missing derived root in each).
var getuid = sync.OnceValue(os.Getuid)

// above names the shallowest directory above p (or p itself) that
// this user may not read or search, "" when there is none: the one a
// failed lookup of p ran into, for the error that asks to open it.
func above(p string) string {
	p = filepath.Clean(p)
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		dir := p[:i]
		if unix.Access(dir, unix.R_OK|unix.X_OK) != nil {
			if _, err := os.Lstat(dir); err == nil {
				return dir
			}
			return ""
		}
	}
	return ""
}

// Hint explains a failed lookup of p, err, for a refused launch:
// the directory closed to the user and how to open it, when there is one.
func Hint(p string, err error) string {
	if dir := above(p); dir != "" {
		return fmt.Sprintf("the directory %s is closed to you (%v); make it readable (chmod u+rx %s) or remove it, then launch again", dir, err, dir)
	}
	return fmt.Sprintf("%v; launch again once every directory on its way is a plain directory you can read", err)
}
