package workspace

import (
	"fmt"
	"slices"

	"github.com/cordon-sandbox/cordon/policy"
)

// socketRoots checks that the policy c of p lets the sandbox name each
// host socket handed over (none in a denied root: handing one over
// carves nothing out of it), and makes each under /tmp a read-only root
// of its own, which the backends that mount a private /tmp bind at its
// path (policy.WithTmp), so the sandbox finds it there.
func socketRoots(r *policy.Resolver, p policy.FsSandboxPolicy, c *policy.Canonical, hosts []policy.HostSocket) (*policy.Canonical, error) {
	var more []string
	for _, h := range hosts {
		if !c.Access(h.Path, policy.Read) {
			return nil, fmt.Errorf("--allow-unix-socket %q: it is in a denied root, which the sandbox cannot name; allow the root to be read, or move the socket", h.Path)
		}
		if policy.UnderTmp(h.Path) && !c.IsRoot(h.Path) {
			more = append(more, h.Path)
		}
	}
	if len(more) == 0 {
		return c, nil
	}
	p.ReadonlyRoots = append(slices.Clone(p.ReadonlyRoots), more...)
	return r.Canonicalize(p)
}

// hostSockets resolves the host sockets named, each once.
func hostSockets(names []string) ([]policy.HostSocket, error) {
	var out []policy.HostSocket
	for _, n := range names {
		hs, err := policy.ResolveSocket(n)
		if err != nil {
			return nil, fmt.Errorf("--allow-unix-socket %q: %w", n, err)
		}
		if !slices.Contains(out, hs) {
			out = append(out, hs)
		}
	}
	return out, nil
}
