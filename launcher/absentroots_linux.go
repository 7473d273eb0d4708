package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/safefs"
	"github.com/cordon-sandbox/cordon/policy"
)

// makeAbsentRoots makes on the host, before the launch, each writable
// root of canon that does not exist yet (stat says so): the mount point
// of its bind, a file where the policy spells one (Canonical.FileRoot),
// else a directory. Only roots the policy names writable are made, so
// only what the command could have made there itself, and they stay
// after the run as its own would. Protected names that do not exist get
// nothing: the entry gate keeps them from being made (package gate).
//
// Each is made beneath the deepest writable root above it, one
// component at a time and never through a link (internal/safefs): that
// is where an earlier sandbox can have swapped a parent for a link, and
// by path the root would land wherever it points. A root under a private
// /tmp is bound from the host's path too (tmpMountPoints makes its mount
// point in the private directory).
func makeAbsentRoots(canon *policy.Canonical, stat bwrap.StatFunc) error {
	var writable []string
	for _, r := range canon.Roots() {
		if r.Kind == policy.Writable || r.Kind == policy.BaseWritable {
			writable = append(writable, r.Path)
		}
	}
	for _, p := range writable { // shallow to deep: a parent root first
		if p == "/" {
			continue
		}
		if exists, _ := stat(p); exists {
			continue
		}
		if err := makeRoot(beneathRoot(p, writable, stat), p, !canon.FileRoot(p)); err != nil {
			return fmt.Errorf("make writable root %s: %w", p, err)
		}
	}
	return nil
}

// beneathRoot is the deepest of the writable roots strictly above p that
// exists, else "/".
func beneathRoot(p string, writable []string, stat bwrap.StatFunc) string {
	best := "/"
	for _, w := range writable {
		if w != "/" && strings.HasPrefix(p, w+"/") && len(w) > len(best) {
			if exists, dir := stat(w); exists && dir {
				best = w
			}
		}
	}
	return best
}

// makeRoot makes p (a directory when dir, else an empty file) and its
// missing parents beneath base, opened; one that is there already, made
// meanwhile by someone else, is left as it is.
func makeRoot(base, p string, dir bool) error {
	rt, err := safefs.OpenRoot(base)
	if err != nil {
		return err
	}
	defer rt.Close()
	rel := strings.TrimPrefix(p, strings.TrimSuffix(base, "/")+"/")
	if dir {
		d, err := rt.MkdirAll(rel, 0o777)
		if err == nil {
			d.Close()
		}
		return err
	}
	parent, err := rt.MkdirAll(path.Dir(rel), 0o777)
	if err != nil {
		return err
	}
	defer parent.Close()
	f, err := parent.CreateExcl(path.Base(rel), 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
