// Package scale builds the large benchmark policy (2,000 nested roots), shared
// by the benchmarks of policy, bwrap and seatbelt and by bench/launch.
package scale

import (
	"fmt"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
)

// Policy2000 has 2,000 roots under base: 100 chains of 10 denied
// directories, each with a writable child that the next denied directory
// sits in (treeNNN/d0/w/d1/w/…/d9/w), so every root is nested in the one
// before and every carve-out needs its own mount or rule.
func Policy2000(base string) policy.FsSandboxPolicy {
	p := policy.FsSandboxPolicy{RestrictWrites: true}
	for t := range 100 {
		dir := filepath.Join(base, fmt.Sprintf("tree%03d", t))
		for d := range 10 {
			dir = filepath.Join(dir, fmt.Sprintf("d%d", d))
			p.DeniedRoots = append(p.DeniedRoots, dir)
			dir = filepath.Join(dir, "w")
			p.WritableRoots = append(p.WritableRoots, dir)
		}
	}
	return p
}
