package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
)

// ensureMasks makes every mask of a plan exist under the mask root and
// touches it, so the tidy (masktidy_linux.go), which it runs first, sees
// it used. A mask is named by its content, so one made by an earlier
// launch is reused as it is: a launch with the usual policies creates
// none.
func ensureMasks(ms []bwrap.Mask) error {
	if len(ms) == 0 {
		return nil
	}
	root := maskRootPath()
	if err := ensurePrivateDir(root); err != nil {
		return err
	}
	tidyMasks(root, time.Now())
	for _, m := range ms {
		dst := filepath.Join(root, m.Key)
		fi, err := os.Lstat(dst)
		if err == nil && fi.IsDir() && fi.Mode().Perm() == 0o111 {
			if err := touchMask(dst); err != nil {
				return fmt.Errorf("mask for denied directories %s: %w", dst, err)
			}
			continue
		}
		if err == nil {
			// Not as built (something changed its mode to fill it): set it
			// aside and build it again.
			removeMask(dst)
		}
		if err := buildMask(root, dst, m); err != nil {
			return fmt.Errorf("mask for denied directories %s: %w", dst, err)
		}
	}
	return nil
}

// buildMask builds the mask in a scratch directory and renames it into
// place, so a mask is either whole or absent.
func buildMask(root, dst string, m bwrap.Mask) error {
	tmp, err := os.MkdirTemp(root, "build-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return err
	}
	dirs := []string{tmp}
	for _, e := range m.Entries {
		p := filepath.Join(tmp, e.Rel)
		for q := filepath.Dir(p); q != tmp; q = filepath.Dir(q) {
			if !slices.Contains(dirs, q) {
				dirs = append(dirs, q)
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if e.Dir {
			err = os.Mkdir(p, 0o700)
			dirs = append(dirs, p)
		} else {
			var f *os.File
			if f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0); err == nil {
				f.Close()
			}
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	// Traversable, not listable.
	for _, d := range dirs {
		if err := os.Chmod(d, 0o111); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		removeMask(tmp)
		if _, statErr := os.Lstat(dst); statErr == nil {
			return nil // another launch made the same mask first
		}
		return err
	}
	return nil
}

// touchMask sets the mask's times to now, the link itself if one was
// planted there (a mask is 0111: it cannot be opened to read).
func touchMask(p string) error {
	now := unix.NsecToTimespec(time.Now().UnixNano())
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
}

// removeMask removes a mask tree despite its 0111 modes. Anything but a
// real directory at p (a link planted there) is removed itself, never
// followed.
func removeMask(p string) {
	if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
		os.Remove(p)
		return
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	os.Chmod(p, 0o700)
	os.RemoveAll(p)
}
