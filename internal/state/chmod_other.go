//go:build !linux

package state

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// chmodNoFollow sets dir to 0700 if it is still the directory fi
// describes, through a descriptor opened without following links. A mode
// without read permission cannot be opened this way; that is reported.
func chmodNoFollow(dir string, fi fs.FileInfo) error {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) {
		return errors.New("it changed while cordon looked at it")
	}
	return f.Chmod(0o700)
}
