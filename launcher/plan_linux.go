package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/policy"
)

// renderOptions are the bwrap.Options both Linux backends render the
// policy with (bwrapCmd adds what only bwrap reads), once the writable
// roots that do not exist yet are made.
func (c *Cmd) renderOptions(canon *policy.Canonical) (bwrap.Options, error) {
	empty, err := emptyFile()
	if err != nil {
		return bwrap.Options{}, err
	}
	opts := bwrap.Options{
		Network:   c.Network,
		EmptyFile: empty,
		MaskRoot:  maskRootPath(),
		Chdir:     c.Dir,
		Stat:      liveStat(canon.Stat),
	}
	for _, made := range []string{c.TmpDir, c.CacheDir} {
		if made == "" {
			continue
		}
		// Made by this launch (makeTmpDir, the private cache) after the
		// policy was resolved: a directory, whatever its spelling in
		// the policy.
		dir, stat := filepath.Clean(made), opts.Stat
		opts.Stat = func(p string) (bool, bool) {
			if p == dir {
				return true, true
			}
			return stat(p)
		}
	}
	if c.NetPolicy != nil {
		s := bwrap.SocketsProxy()
		opts.Sockets = &s
	}
	// The mount points of writable roots that do not exist yet, made
	// before the render so that it sees them (liveStat).
	return opts, makeAbsentRoots(canon, opts.Stat)
}

// prepareMountPoints makes the plan's mask directories and the mount
// points in the private /tmp.
func prepareMountPoints(plan *bwrap.Plan, canon *policy.Canonical) error {
	if err := ensureMasks(plan.Masks); err != nil {
		return err
	}
	return tmpMountPoints(plan, canon.TmpSource())
}

// liveStat asks again about a root the policy found absent when it was
// resolved: a file made since by the launcher itself (the audit log and
// its anchor, written after the policy took them in) or by the host must
// get its read-only bind. The entry gate keeps only names that do not
// exist from being made; one that exists without a bind would be
// writable inside. A link made since stays absent, as the policy would
// have seen it.
func liveStat(resolved bwrap.StatFunc) bwrap.StatFunc {
	return func(p string) (exists, dir bool) {
		if exists, dir = resolved(p); exists {
			return exists, dir
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return exists, dir
		}
		return true, fi.IsDir()
	}
}

// tmpMountPoints makes, in the private directory at /tmp, the mount
// points of the mounts below /tmp (a workspace under /tmp, a denied root
// there): the native init mounts onto what exists only, and bwrap would
// make them with its own modes. They stay, as the private TMPDIR does.
func tmpMountPoints(plan *bwrap.Plan, src string) error {
	if src == "" {
		return nil
	}
	for _, m := range plan.Mounts {
		if m.Path == policy.TmpPath || !policy.UnderTmp(m.Path) {
			continue
		}
		p := filepath.Join(src, strings.TrimPrefix(m.Path, policy.TmpPath))
		dir := p
		if !m.Dir {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("private /tmp: mount point %s: %w", m.Path, err)
		}
		if m.Dir {
			continue
		}
		f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("private /tmp: mount point %s: %w", m.Path, err)
		}
		f.Close()
	}
	return nil
}
