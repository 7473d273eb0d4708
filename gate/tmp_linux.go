package gate

import (
	"strings"

	"golang.org/x/sys/unix"
)

// bindPrivate binds a Unix socket by a new name in a private creation
// directory (EntryDecider.Private: /tmp under the landlock backend),
// where the kernel's wall lets the sandbox make nothing: the gate binds
// it on the directory it resolved, with the caller's umask, and records
// the name beside the files the sandbox made there, so that only the
// sandbox reaches, renames and removes it, and it goes when the sandbox
// is gone. The caller has refused a name that exists (EADDRINUSE).
func (g *gate) bindPrivate(s *sockCall, n named) unix.Errno {
	if len(g.ent.made) >= MaxMade {
		return unix.ENOSPC
	}
	unix.Umask(s.umask)
	g.acting(n.path)
	if e := bindIn(s.sock, n.dir, n.name); e != 0 {
		return e
	}
	g.socks.record(s.sock)
	var st unix.Stat_t
	if err := unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
		// Only the host can have renamed the name meanwhile (the
		// sandbox cannot change this directory); the gate removes it at
		// the end only while it still names the inode recorded.
		g.ent.record(n.dirPath, n.name, &st)
	}
	return 0
}

// madeDirs is an EntryDecider whose private creation directories are
// also the directories the sandbox made in one (mktemp -d -p /tmp, a
// build's scratch tree): nothing but the gate makes names there for the
// sandbox, so what the record holds is all of the sandbox's in them, and
// the host's entries stay out of reach as in the directory above.
type madeDirs struct {
	EntryDecider
	s *entryState
}

func (d madeDirs) Private(dir string) bool {
	return d.EntryDecider.Private(dir) || d.s.isMadeDir(dir)
}

// withMadeDirs is ed with the directories the sandbox made in private
// creation directories private too.
func (g *gate) withMadeDirs(ed EntryDecider) EntryDecider {
	if len(g.ent.made) == 0 {
		return ed
	}
	return madeDirs{ed, &g.ent}
}

// isMadeDir says whether path names a directory the sandbox made in a
// private creation directory. Only the gate renames and removes entries
// there for the sandbox, and it keeps the record's names current (moved).
func (s *entryState) isMadeDir(path string) bool {
	dir, name := parentOf(path), path[len(parentOf(path)):]
	name = name[min(1, len(name)):]
	for _, m := range s.made {
		if m.isDir && m.dir == dir && m.name == name {
			return true
		}
	}
	return false
}

// moved renames, in the record, what lies beneath a directory the gate
// renamed from old to new.
func (s *entryState) moved(old, new string) {
	for i, m := range s.made {
		if m.dir == old {
			s.made[i].dir = new
		} else if rest, ok := strings.CutPrefix(m.dir, old+"/"); ok {
			s.made[i].dir = new + "/" + rest
		}
	}
}

// mkdirPrivate makes a directory in a private creation directory,
// recorded as the sandbox's.
func (g *gate) mkdirPrivate(n named, mode uint32) (int64, unix.Errno, bool) {
	if len(g.ent.made) >= MaxMade {
		return 0, unix.ENOSPC, true
	}
	g.acting(n.path)
	if err := g.perform(func() error { return unix.Mkdirat(n.dir, n.name, mode) }); err != nil {
		return 0, errnoOf(err), true
	}
	var st unix.Stat_t
	if err := unix.Fstatat(n.dir, n.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		g.ent.record(n.dirPath, n.name, &st)
	}
	return 0, 0, true
}

// ownMade says whether the object st at path is one the sandbox made in
// a private creation directory: its own to chmod and touch, as any file
// it makes is.
func (g *gate) ownMade(path string, st *unix.Stat_t) bool {
	ed, ok := g.d.(EntryDecider)
	if !ok || len(g.ent.made) == 0 {
		return false
	}
	dir := parentOf(path)
	return g.withMadeDirs(ed).Private(dir) && g.ent.isMade(dir, st)
}
