package landlock

import "strings"

// weakened reports whether the conformance suite's mutation check left
// out step.
func (s *Spec) weakened(step string) bool {
	for w := range strings.SplitSeq(s.Weaken, ",") {
		if w == step {
			return true
		}
	}
	return false
}
