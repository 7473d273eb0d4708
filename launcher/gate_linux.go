package launcher

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/gate"
)

// metaGate is the launcher's end of a sandbox's gate: the landlock
// backend's metadata and entry gate, the native and bwrap backends' entry
// gate (rootedEntries).
type metaGate struct {
	d             gate.Decider
	id            gate.Identity
	mine, theirs  *os.File // the socket the init sends the listener on
	cancel        context.CancelFunc
	served        chan struct{} // closed once Serve has returned, and tidied
	mu            sync.Mutex
	started, done bool
}

// gateTidyMax bounds how long the end of a launch waits for the gate to
// return and remove what the sandbox made in private creation directories.
const gateTidyMax = 5 * time.Second

func newMetaGate(d gate.Decider) (*metaGate, error) {
	id, err := gate.Self()
	if err != nil {
		return nil, err
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("metadata gate: socketpair: %w", err)
	}
	return &metaGate{d: d, id: id, mine: os.NewFile(uintptr(sp[0]), "metagate"),
		theirs: os.NewFile(uintptr(sp[1]), "metagate")}, nil
}

// serve, once the init has started, takes the listener it sends and
// decides each gated call until the sandbox is gone or stop.
// Nothing arrives when the init failed before installing its filter: it
// exits with its own reason (125), which Wait reports.
func (g *metaGate) serve(stderr io.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return
	}
	g.started = true
	g.theirs.Close() // only the init holds it now: EOF once it is gone
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	sock := g.mine
	d := g.d
	served := make(chan struct{})
	g.served = served
	go func() {
		defer close(served)
		defer sock.Close()
		fds, err := gate.RecvFds(int(sock.Fd()), 3)
		if err != nil {
			return
		}
		for _, fd := range fds[1:] {
			defer unix.Close(fd) // the diagnostics, the wall thread's ruleset: held until Serve ends
		}
		l, d := fds[0], walled(d, fds[1:])
		if err := gate.Serve(ctx, l, d, g.id); err != nil && ctx.Err() == nil && stderr != nil {
			fmt.Fprintf(stderr, "cordon: metadata gate: %v; the sandbox's chmod, chown, xattr, utimes, inotify_add_watch and connect calls, and what it makes, removes or renames where the plan froze a directory, now fail\n", err)
		}
	}()
}

// stop ends the gate at the end of the run: later gated calls of
// anything left behind fail (ENOSYS).
func (g *metaGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		g.cancel()
	}
}

// close releases what a launch that never started holds.
func (g *metaGate) close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	if g.cancel != nil {
		g.cancel()
	}
	if g.served != nil {
		// Serve removes, as it returns, what the sandbox made in /tmp and
		// /dev/shm under landlock: the launcher must not exit first. A
		// call in flight is answered in moments; the bound keeps a stuck
		// one from holding the exit.
		select {
		case <-g.served:
		case <-time.After(gateTidyMax):
		}
	}
	if !g.started {
		g.mine.Close()
		g.theirs.Close()
	}
}
