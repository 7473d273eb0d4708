//go:build linux || darwin

package safefs

import (
	"io/fs"
	"os"
	"path"
	"slices"

	"golang.org/x/sys/unix"
)

// WalkFunc is called for each entry Walk visits, with its path relative
// to the root and its type (fs.ModeSymlink for a link, which Walk never
// follows). fs.SkipDir skips a directory, fs.SkipAll ends the walk.
type WalkFunc func(rel string, typ fs.FileMode) error

// Walk visits rel and, when it is a directory, everything below it in
// lexical order. Each directory is opened from the one above it without
// following a link, so a directory swapped for a link during the walk is
// skipped, never entered. Entries that cannot be read are skipped.
func (r *Root) Walk(rel string, fn WalkFunc) error {
	c, err := clean(rel)
	if err != nil {
		return pathErr("walk", r.full(rel), err)
	}
	in, err := r.Lstat(c)
	if err != nil {
		return err
	}
	if err := fn(c, in.Mode.Type()); err != nil || !in.IsDir() {
		if err == fs.SkipDir || err == fs.SkipAll {
			return nil
		}
		return err
	}
	fd, err := openBeneath(r.fd, c, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil // swapped since the Lstat
	}
	if err := walkDir(fd, c, fn); err != fs.SkipAll {
		return err
	}
	return nil
}

// walkDir walks the directory fd (which it closes), named rel.
func walkDir(fd int, rel string, fn WalkFunc) error {
	f := os.NewFile(uintptr(fd), rel)
	names, _ := f.Readdirnames(-1)
	defer f.Close()
	slices.Sort(names)
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, statFlags()) != nil {
			continue
		}
		p := path.Join(rel, name)
		typ := info(&st).Mode.Type()
		err := fn(p, typ)
		if err == fs.SkipDir {
			continue
		}
		if err != nil {
			return err
		}
		if !typ.IsDir() {
			continue
		}
		sub, err := openBeneath(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			continue // swapped for a link (or unreadable): not entered
		}
		if err := walkDir(sub, p, fn); err != nil {
			return err
		}
	}
	return nil
}
