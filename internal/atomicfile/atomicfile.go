// Package atomicfile replaces a small file of cordon's own whole: the new
// content goes to a temporary file beside it, which is then renamed over
// it. A reader sees the old content or the new, never part of either, and
// a writer that fails or is killed half-way leaves the old file as it was
// (the temporary file is removed on failure; one a kill leaves behind
// starts with a dot and ends in .tmp).
//
// A rename gives the name a new inode. That is what the record files and
// caches here want, and what a file a sandbox has bound read-only must
// not get: audit anchors are rewritten in place instead (package audit).
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile replaces name with data, mode 0600. A crash of the machine
// may leave the file empty or old: for what the next run can rebuild or
// do without (caches).
func WriteFile(name string, data []byte) error { return write(name, data, false) }

// WriteFileSync is WriteFile that has the data on disk before the rename,
// so that after a crash the file holds the old content or the new.
func WriteFileSync(name string, data []byte) error { return write(name, data, true) }

// WriteFileMode is WriteFileSync with the file's mode perm: for a file
// of the user's that cordon edits (an agent's settings), whose mode is
// the user's choice.
func WriteFileMode(name string, data []byte, perm os.FileMode) error {
	return writeMode(name, data, true, perm)
}

func write(name string, data []byte, sync bool) error { return writeMode(name, data, sync, 0o600) }

func writeMode(name string, data []byte, sync bool, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	if perm != 0o600 {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
