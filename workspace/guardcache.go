package workspace

import (
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The git guard reads a dozen things in each repository the scan found
// (gitdir's hooks, config, commondir, config.worktree, index), on every
// launch: for a workspace of hundreds of repositories, more than the
// scan's own check. Most repositories are plain: a git directory whose
// config names no path, with no commondir or config.worktree, no hook
// but git's samples, and no file of it with a second hard link. For a
// plain one the guard's answer is the git directory alone, and it stays
// so while nothing it read changes. A guard record keeps, for each plain
// repository, the stamps that say so:
//
//   - the git directory's (inode, ctime): an entry added, removed or
//     renamed there (a commondir, config.worktree, a new config or index
//     put in place by rename) moves it;
//   - the hooks directory's: a hook added or renamed moves it;
//   - the config file's (inode, ctime, size): its content, or a new hard
//     link to it, moves them.
//
// A later launch looks at those three and at the index (a hard link made
// to it moves no directory), four lstats, and takes the answer while they
// match; anything else is read again in full. Like the scan's record, it
// lives in cordon's state directory, out of every sandbox's reach, and no
// stamp changed within racyWindow of its reading is kept.

// guardStamp is what a plain repository's answer rests on.
type guardStamp struct {
	Gitdir, Hooks stamp
	Config        stamp
	ConfigSize    int64
}

// guardCache is the record of one root's guard: prior as read, next as
// this launch found it.
type guardCache struct {
	file  string
	prior map[string]guardStamp
	next  map[string]guardStamp
	start time.Time
}

const guardHeader = "cordon-guard 1"

// loadGuardCache reads root's guard record from dir ("" keeps none: nil).
func loadGuardCache(root, dir string) *guardCache {
	if dir == "" || testhook.GitPerPath {
		return nil
	}
	c := &guardCache{file: filepath.Join(dir, recordName(root)+".guard"), next: map[string]guardStamp{}, start: time.Now()}
	b, err := os.ReadFile(c.file)
	if err == nil {
		c.prior, _ = decodeGuard(b)
	}
	return c
}

// fork is the cache of one of the guard's workers: the same prior, its
// own next.
func (c *guardCache) fork() *guardCache {
	if c == nil {
		return nil
	}
	return &guardCache{prior: c.prior, next: map[string]guardStamp{}, start: c.start}
}

func (c *guardCache) join(o *guardCache) {
	if c != nil && o != nil {
		maps.Copy(c.next, o.next)
	}
}

// store writes the record when it changed; a failure costs a full guard
// next time, nothing more.
func (c *guardCache) store() {
	if c == nil || maps.Equal(c.prior, c.next) {
		return
	}
	w := newRecord(guardHeader)
	for gd, s := range c.next {
		w.str(gd)
		w.stamp(s.Gitdir)
		w.stamp(s.Hooks)
		w.stamp(s.Config)
		w.int(s.ConfigSize)
	}
	_ = atomicfile.WriteFile(c.file, w.b)
}

// decodeGuard reads what store wrote (gitdir GITDIR HOOKS CONFIG
// CONFIGSIZE, each stamp an inode and a ctime); ok is false for anything
// else, which costs a full guard and nothing more.
func decodeGuard(b []byte) (map[string]guardStamp, bool) {
	r := readRecord(b, guardHeader)
	if r == nil {
		return nil, false
	}
	out := map[string]guardStamp{}
	for r.body != "" && !r.bad {
		gd := r.str()
		out[gd] = guardStamp{Gitdir: r.stamp(), Hooks: r.stamp(), Config: r.stamp(), ConfigSize: r.int(1<<63 - 1)}
	}
	if !r.done() {
		return nil, false
	}
	return out, true
}

// plainNow reads the stamps of git directory gd as the record keeps them,
// and whether gd is still plain in what they cover (a directory; config
// a regular file with one link; the index, if any, with one link). gdst,
// when set, is gd's lstat, just taken.
func plainNow(gd string, gdst *syscall.Stat_t) (guardStamp, bool) {
	var s guardStamp
	var st syscall.Stat_t
	if gdst == nil {
		if syscall.Lstat(gd, &st) != nil {
			return s, false
		}
		gdst = &st
	}
	if gdst.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return s, false
	}
	s.Gitdir = statStamp(gdst)
	var buf [512]byte
	if lstatJoin(&buf, gd, "hooks", &st) == nil {
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			return s, false // a link's target changes under an unchanged link
		}
		s.Hooks = statStamp(&st)
	}
	if lstatJoin(&buf, gd, "config", &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
		return s, false
	}
	s.Config, s.ConfigSize = statStamp(&st), st.Size
	if lstatJoin(&buf, gd, "index", &st) == nil && st.Nlink != 1 {
		return s, false
	}
	return s, true
}

// cached reports whether gd's guard answer may be taken from the record:
// it was plain then and nothing it rested on changed since. st, when
// set, is gd's lstat, just taken.
func (c *guardCache) cached(gd string, st *syscall.Stat_t) bool {
	if c == nil {
		return false
	}
	prior, ok := c.prior[gd]
	if !ok {
		return false
	}
	now, plain := plainNow(gd, st)
	if !plain || now != prior {
		return false
	}
	c.next[gd] = now
	return true
}

// remember records gd, found plain by a full reading, unless a stamp is
// too fresh to trust (racyWindow).
func (c *guardCache) remember(gd string) {
	if c == nil {
		return
	}
	now, plain := plainNow(gd, nil)
	if !plain {
		return
	}
	for _, s := range []stamp{now.Gitdir, now.Hooks, now.Config} {
		if c.start.Sub(time.Unix(0, s.Ctime)) < racyWindow {
			return
		}
	}
	c.next[gd] = now
}
