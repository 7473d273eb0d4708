package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/internal/closeddir"
)

// closedRoot is a denied root that could not be looked up because a
// directory on its way is closed to this user.
type closedRoot struct {
	in  string // as the caller spelled it
	err error
}

// closedDenied reports whether err, from resolving a denied root, is a
// directory on its way closed to this user: such a root is judged by
// judgeClosed once the rest of the policy is known.
func closedDenied(k Kind, err error) bool {
	return k == Denied && errors.Is(err, fs.ErrPermission)
}

// judgeClosed decides the denied roots that could not be looked up
// because a directory on their way is closed to this user (mode 0700 of
// another user, or one the user closed). The sandbox runs as this user,
// without capabilities, so it cannot pass that directory either, unless
// it can open it: change its mode, which takes the policy letting it
// write there and this user owning it (only the owner may chmod). Then
// "cannot look" must not mean "nothing to protect", and the launch is
// refused, saying why and how to open the directory. Otherwise nothing
// in the sandbox reaches the root either, and the launch goes on with a
// note. (Replacing the directory reaches nothing: what was denied stays
// in the one moved away, as closed as before.)
func (c *Canonical) judgeClosed(closed []closedRoot, r resolver) error {
	for _, cr := range closed {
		dir := closedAbove(cr.in, r)
		if dir == "" {
			return fmt.Errorf("deniedRoots: %w", cr.err)
		}
		if c.Access(dir, Write) && ownedHere(dir) {
			return fmt.Errorf("deniedRoots %q: cannot look it up, and the sandbox could reach it: the directory %s is closed to you, but it is yours and lies where the sandbox may write, so the sandbox can open it again (chmod) and read what you denied; %s",
				cr.in, dir, closeddir.Hint(dir+"/x", cr.err))
		}
		why := "it lies outside every writable root"
		if c.Access(dir, Write) {
			why = "it is another user's"
		}
		c.notes = append(c.notes, fmt.Sprintf("deniedRoots %q: not looked up, and nothing to protect: the directory %s is closed to you, and the sandbox, which runs as you, cannot open it either (%s, so its mode cannot be changed from inside)", cr.in, dir, why))
	}
	return nil
}

// ownedHere reports whether this process's user owns dir (or cannot
// tell): the one who may change its mode.
func ownedHere(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Getuid()
}

// closedAbove is the canonical directory whose entries the lookup of in
// could not see: the deepest prefix of in that resolves, below which the
// next one fails for want of permission. "" when none is found.
func closedAbove(in string, r resolver) string {
	clean := filepath.Clean(in)
	last := ""
	for i := 1; i <= len(clean); i++ {
		if i < len(clean) && clean[i] != '/' {
			continue
		}
		prefix := clean[:i]
		if strings.HasSuffix(prefix, "/") && prefix != "/" {
			continue
		}
		cp, _, err := resolveVia(prefix, r)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return last
			}
			return ""
		}
		last = cp
	}
	return ""
}
