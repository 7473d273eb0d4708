package gate

import (
	"golang.org/x/sys/unix"
)

// maxBrought bounds the entries a rename's walk of the directory it
// moves looks at, and maxBroughtDepth how deep: past either the rename
// is refused with EXDEV, what a rename across file systems answers, so
// that mv copies the tree name by name through the gate instead.
const (
	maxBrought      = 10000
	maxBroughtDepth = 64
)

// brings says whether moving the directory name in dir to path brings
// in no name the model protects there (a tree carrying .claude/ moved
// into the workspace is refused like .claude itself): EACCES when it
// does, EXDEV past the bound.
func (g *gate) brings(ed EntryDecider, dir int, name, path string) unix.Errno {
	left := maxBrought
	return g.bringsAt(ed, dir, name, path, 0, &left)
}

func (g *gate) bringsAt(ed EntryDecider, dir int, name, path string, depth int, left *int) unix.Errno {
	if depth >= maxBroughtDepth {
		return unix.EXDEV
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOTDIR || err == unix.ELOOP {
		return 0 // not a directory: its own name was decided
	}
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(fd)
	var buf [8192]byte
	var names []string
	for {
		n, err := unix.ReadDirent(fd, buf[:])
		if err != nil {
			return errnoOf(err)
		}
		if n <= 0 {
			return 0
		}
		names = names[:0]
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, e := range names {
			if *left--; *left < 0 {
				return unix.EXDEV
			}
			p := path + "/" + e
			if !ed.MayEntry(p) {
				return unix.EACCES
			}
			if e := g.bringsAt(ed, fd, e, p, depth+1, left); e != 0 {
				return e
			}
		}
	}
}

// bringsBoth judges a rename of o to n by what it brings: the directory
// moved, and with RENAME_EXCHANGE the one moved back.
func (g *gate) bringsBoth(ed EntryDecider, o, n named, st *unix.Stat_t, flags int) unix.Errno {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if e := g.brings(ed, o.dir, o.name, n.path); e != 0 {
			return e
		}
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		return g.brings(ed, n.dir, n.name, o.path)
	}
	return 0
}
