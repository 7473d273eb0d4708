package safefs

import (
	"testing"

	"golang.org/x/sys/unix"
)

func forceWalk(t *testing.T) {
	old := noOpenat2.Load()
	noOpenat2.Store(true)
	t.Cleanup(func() { noOpenat2.Store(old) })
}

func mkfifo(p string) error { return unix.Mkfifo(p, 0o644) }
