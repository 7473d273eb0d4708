package launcher

import (
	"fmt"

	"github.com/cordon-sandbox/cordon/policy"
)

// hostSockets are the identities of the host's Unix sockets the user
// handed over (Cmd.UnixSockets), as the gate admits them
// (gate.HostSockets), and whether the sandbox is on the host's network
// (gate.HostNetwork), where Unix sockets go through the gate only for
// them.
type hostSockets struct {
	ids     []policy.FileID
	network bool
}

// HostSocket says whether dev, ino is one of the sockets handed over.
func (h hostSockets) HostSocket(dev, ino uint64) bool {
	for _, id := range h.ids {
		if id.Dev == dev && id.Ino == ino {
			return true
		}
	}
	return false
}

// HostNetwork says whether the sandbox is on the host's network.
func (h hostSockets) HostNetwork() bool { return h.network }

// checkSockets resolves each socket handed over again, at the launch:
// the path must still name the socket the caller resolved (its
// identity, when the caller recorded one), and the sandbox must be
// able to name it, which the backend decides. A backend that cannot
// hand a socket over refuses the launch, naming it.
func (c *Cmd) checkSockets(canon *policy.Canonical, backend string) (hostSockets, error) {
	out := hostSockets{network: c.Network}
	for _, want := range c.UnixSockets {
		hs, err := policy.ResolveSocket(want.Path)
		if err != nil {
			return out, fmt.Errorf("--allow-unix-socket %q: %w", want.Path, err)
		}
		if want.ID != (policy.FileID{}) && hs.ID != want.ID {
			return out, fmt.Errorf("--allow-unix-socket %q: the socket there changed since the policy was built (%v, now %v)", want.Path, want.ID, hs.ID)
		}
		if err := c.socketSeen(canon, backend, hs.Path); err != nil {
			return out, fmt.Errorf("--allow-unix-socket %q: %w", want.Path, err)
		}
		out.ids = append(out.ids, hs.ID)
	}
	return out, nil
}

// socketSeen says why the sandbox could not name the socket at p on
// backend, nil when it can.
func (c *Cmd) socketSeen(canon *policy.Canonical, backend, p string) error {
	switch backend {
	case BackendNone:
		return nil
	case BackendSeatbelt:
		return fmt.Errorf("the seatbelt backend cannot hand over a host socket yet")
	}
	if !canon.Access(p, policy.Read) {
		return fmt.Errorf("%s is in a denied root: the sandbox could not name it", p)
	}
	if (backend == BackendNative || backend == BackendBwrap) && policy.UnderTmp(p) && !canon.IsRoot(p) {
		// workspace.Compose makes it a read-only root, bound over the
		// private /tmp at its path; a caller of this package must too.
		return fmt.Errorf("%s is under /tmp, which is the sandbox's own on %s: make the socket a read-only root (Policy.ReadonlyRoots) so it is bound there", p, backend)
	}
	return nil
}
