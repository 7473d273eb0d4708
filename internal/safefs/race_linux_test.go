package safefs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRaceExchange races reads and writes with a goroutine that exchanges
// a directory and a link to outside (renameat2 RENAME_EXCHANGE) in a loop.
// The conformance suite does the same from inside a sandbox.
func TestRaceExchange(t *testing.T) {
	both(t, func(t *testing.T) {
		root, outside := fixture(t)
		r, err := OpenRoot(root)
		require.NoError(t, err)
		defer r.Close()
		var stop atomic.Bool
		done := make(chan int)
		go func() {
			n := 0
			for !stop.Load() {
				if unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "dir"), unix.AT_FDCWD, filepath.Join(root, "link"), unix.RENAME_EXCHANGE) == nil {
					n++
				}
			}
			done <- n
		}()
		refused := 0
		for range 2000 {
			if err := r.WriteFile("dir/f", []byte("pwn"), 0o644); err != nil {
				refusedForLink(t, err)
				refused++
			}
			if d, err := r.MkdirAll("dir/sub", 0o755); err != nil {
				refusedForLink(t, err)
			} else {
				d.Close()
			}
			f, err := r.Open("dir/f")
			if err != nil {
				refusedForLink(t, err)
				continue
			}
			b, _ := io.ReadAll(f)
			f.Close()
			require.NotEqual(t, "secret", string(b))
		}
		stop.Store(true)
		swaps := <-done
		t.Logf("%d exchanges, %d of 2000 writes refused", swaps, refused)
		b, _ := os.ReadFile(filepath.Join(outside, "f"))
		require.Equal(t, "secret", string(b))
		ents, _ := os.ReadDir(outside)
		require.Len(t, ents, 1, "nothing created outside")
	})
}

// refusedForLink accepts the errors of a link met at open time: ELOOP
// (ErrSymlink), or ENOTDIR where a directory was expected and the link was
// swapped out again before the message could name it.
func refusedForLink(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrSymlink) && !errors.Is(err, unix.ENOTDIR) {
		t.Fatalf("unexpected error: %v", err)
	}
}
