package landlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// EntryKind is what a directory entry is, as lstat(2) sees it.
type EntryKind int

const (
	EntryFile EntryKind = iota
	EntryDir
	EntrySymlink
	// EntryOther is a device, FIFO or socket: a rule on it is a file's.
	EntryOther
)

// Entry is one name in a directory, with the identity of the object it
// named when it was listed (0, 0 when the Lister does not know it).
type Entry struct {
	Name string
	Kind EntryKind
	Dev  uint64
	Ino  uint64
}

// Lister lists the host's directories for Render.
type Lister interface {
	// ReadDir lists dir without following a link: dir itself must be a
	// directory, not a link to one, and entries are what lstat says.
	// It returns at most max+1 entries: more than max says that dir holds
	// more than max (which ones are then returned is unspecified).
	ReadDir(dir string, max int) ([]Entry, error)
	// Lstat is the entry at path, without following a link.
	Lstat(path string) (Entry, error)
}

// OSLister lists this host's directories.
type OSLister struct{}

// ReadDir lists dir, refusing a dir that is a symlink. The directory is
// opened O_NOFOLLOW|O_DIRECTORY|O_NONBLOCK, so that a link or a FIFO
// swapped in after the lstat can neither redirect nor block the listing;
// each entry is lstat'ed beneath the opened directory, its kind and
// identity taken from that one lstat, which the init compares with the
// object it opens (a link swapped in on the way to dir later is caught
// there too: the init opens every rule's path without following links).
func (OSLister) ReadDir(dir string, max int) ([]Entry, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("list %s: not a directory (%s)", dir, fi.Mode().Type())
	}
	fd, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, fmt.Errorf("list %s: it changed while it was opened", dir)
	}
	var out []Entry
	for len(out) <= max {
		des, err := f.ReadDir(max + 1 - len(out))
		for _, de := range des {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, de.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue // gone since: not there to grant
			}
			out = append(out, entryOf(de.Name(), &st))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", dir, err)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// openDir opens dir for listing: never through a link at its end, never
// waiting on a FIFO or device swapped in for it.
func openDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// Lstat is what path is, not following a link.
func (OSLister) Lstat(path string) (Entry, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return Entry{}, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return entryOf(path[strings.LastIndexByte(path, '/')+1:], &st), nil
}

func entryOf(name string, st *unix.Stat_t) Entry {
	k := EntryOther
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		k = EntryDir
	case unix.S_IFLNK:
		k = EntrySymlink
	case unix.S_IFREG:
		k = EntryFile
	}
	return Entry{Name: name, Kind: k, Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}
