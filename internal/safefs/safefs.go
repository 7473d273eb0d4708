// Package safefs opens files beneath an opened directory so that the
// kernel, at the moment of each call, decides where a path leads, and no
// symbolic link is followed on the way.
//
// cordon's file tools and the roots it makes before a launch do their I/O outside the
// sandbox, while a sandboxed process may be changing the same tree: it can
// swap any directory on a path for a symlink (mv dir dir.real; ln -s ~ dir)
// or exchange two entries in a loop (renameat2 RENAME_EXCHANGE). A path
// checked first and opened later is then opened somewhere else. Here every
// path is resolved relative to a directory descriptor, one kernel call at
// a time: Linux uses openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS, and a per-component openat(O_NOFOLLOW) walk where
// openat2 is missing; macOS uses the walk. A symlink anywhere in a path is
// an error (ErrSymlink), never followed: callers resolve links they mean
// to follow before, and a link found at open time was put there since.
// See docs/threat-model.md, classes 2 (symlinks) and 5 (paths that do not
// exist yet), and docs/design.md §5 (the permission pipeline).
//
// Paths given to a Root are relative, slash-separated, without "..".
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// ErrSymlink is the cause of an error for a path that has a symbolic link
// in it.
var ErrSymlink = errors.New("a symbolic link is in the way (links are not followed here)")

// ErrOutside is the cause of an error for a path that is absolute or climbs
// out of its root with "..".
var ErrOutside = errors.New("path is not beneath the root")

// Info is what Lstat reports about an entry.
type Info struct {
	Mode fs.FileMode
	Size int64
	Dev  uint64
	Ino  uint64
	Uid  int
	Gid  int
}

// IsDir reports whether the entry is a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// clean checks rel and returns it cleaned ("." for the root itself).
func clean(rel string) (string, error) {
	if strings.HasPrefix(rel, "/") {
		return "", ErrOutside
	}
	c := path.Clean(rel)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrOutside
	}
	return c, nil
}

// split returns the parent ("." for the root) and the last component.
func split(rel string) (dir, base string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

func pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// LinkError is the cause of an error for a path with a symbolic link in
// it: Link is the first component that is one (as far as it could tell:
// the path itself when the link has gone since). It wraps ErrSymlink.
type LinkError struct {
	Link string
}

func (e *LinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link (links are not followed here)", e.Link)
}

func (e *LinkError) Unwrap() error { return ErrSymlink }
