package safefs

import (
	"testing"

	"golang.org/x/sys/unix"
)

func forceWalk(*testing.T) {} // the walk is all there is

func mkfifo(p string) error { return unix.Mkfifo(p, 0o644) }
