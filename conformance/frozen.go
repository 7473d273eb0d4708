package conformance

import (
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/landlock"
)

// Plan is the landlock plan a launch of p (with env) would get from the
// host as it is now, or nil under another backend. Take it before the
// launch whose step Made judges.
func (h *H) Plan(p Policy, env ...string) *landlock.Plan {
	if h.Backend() != "landlock" {
		return nil
	}
	return h.landlockPlan(h.Script(p, "", env...))
}

// Made expects marker m of o, printed by a step that makes, removes or
// renames the entries rels directly in their directories, which the
// model allows. Under landlock a directory the plan freezes (it holds a
// carve-out) no longer refuses it: the entry gate makes there what the
// model allows (docs/threat-model.md, "Entries under the landlock
// backend"), so the step must succeed on every backend, and pl (the
// launch's landlock plan, from Plan) no longer changes the verdict.
func (h *H) Made(o Output, pl *landlock.Plan, m string, rels ...string) {
	_, _ = pl, rels
	h.Expect(o, m)
}

// MetaChanged is Made for a step that changes the mode, owner, times or
// attributes of rels: under landlock the plan's metadata gate refuses it
// on a directory the plan freezes (its mode would reach what the plan
// grants below) and on what the plan does not let the sandbox write.
func (h *H) MetaChanged(o Output, pl *landlock.Plan, m string, rels ...string) {
	var refused []string
	if pl != nil {
		for _, r := range rels {
			p := h.Path(r)
			fi, err := os.Lstat(p)
			if !pl.MayChangeMeta(p, err == nil && fi.IsDir()) {
				refused = append(refused, p)
			}
		}
	}
	if len(refused) == 0 {
		h.Expect(o, m)
		return
	}
	if Marked(o, m) {
		h.Errorf("%q succeeded inside the sandbox, though the landlock plan refuses changing %s:\n%s", m, strings.Join(refused, ", "), o)
	}
}
