package conformance

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/landlock"
	"github.com/cordon-sandbox/cordon/launcher"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/workspace"
)

// modelSeeds are the seeds of the model differential; each is one case and
// one sandbox launch. Fixed so a failure reproduces.
var modelSeeds = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

// The differential's tree, relative to the fixture's "t": names that share
// prefixes ("a", "ab", "a/bc") so prefix-matching bugs show.
var (
	modelDirs  = []string{"", "a", "a/b", "a/b/c", "ab", "a/bc", "d", "d/e"}
	modelFiles = []string{"f", "a/f", "a/b/f", "a/b/c/f", "ab/f", "a/bc/f", "d/f", "d/e/f", "a/b/cf"}
	// Roots may also name paths that do not exist at launch.
	modelMissing = []string{"a/new", "a/b/nx", "d/e/nx", "ab/nx", "nx"}
)

func modelCases() []Case {
	var cs []Case
	for _, seed := range modelSeeds {
		cs = append(cs, Case{Name: fmt.Sprintf("model-seed-%d", seed), Class: Model,
			Summary: "generated policy: real read/write of every probe path equals policy.Access; no residue",
			Run:     func(h *H) { runModel(h, seed) }})
	}
	return cs
}

// genPolicy draws 2 to 6 roots of random kinds from the tree and the
// missing names, and a random write mode.
func genPolicy(r *rand.Rand, t string) policy.FsSandboxPolicy {
	cands := append(append(append([]string{}, modelDirs...), modelFiles...), modelMissing...)
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	var p policy.FsSandboxPolicy
	p.RestrictWrites = r.Intn(2) == 0
	for _, c := range cands[:2+r.Intn(5)] {
		abs := filepath.Join(t, c)
		// The probes take a missing root for a directory: a writable
		// one is spelled so (else it would be a file, with nothing
		// below it to probe; notyet-writable-file covers that).
		dirAbs := abs
		if slices.Contains(modelMissing, c) {
			dirAbs += "/"
		}
		switch r.Intn(7) {
		case 0, 1:
			p.DeniedRoots = append(p.DeniedRoots, abs)
		case 2, 3:
			p.ReadonlyRoots = append(p.ReadonlyRoots, abs)
		case 4, 5:
			p.WritableRoots = append(p.WritableRoots, dirAbs)
		default:
			p.BaseWritableRoots = append(p.BaseWritableRoots, dirAbs)
		}
	}
	return p
}

// probe is one question put to the sandbox.
type probe struct {
	path string
	op   policy.Op
	kind string // "dir", "file": read probes; "new", "append": write probes
}

func runModel(h *H, seed int64) {
	t := h.Mkdir("t")
	for _, d := range modelDirs {
		h.Mkdir(filepath.Join("t", d))
	}
	for _, f := range modelFiles {
		h.Write(filepath.Join("t", f), "data\n")
	}
	fp := genPolicy(rand.New(rand.NewSource(seed)), t)
	canon, err := policy.Canonicalize(fp)
	if err != nil {
		h.Fatalf("seed %d: generated an invalid policy: %v", seed, err)
	}
	// Directories as the sandbox will see them: the tree's, and roots that
	// do not exist yet (the launcher makes them directories).
	dirs := map[string]bool{}
	for _, d := range modelDirs {
		dirs[filepath.Join(t, d)] = true
	}
	var made []string // writable roots native and bwrap make on the host
	for _, r := range canon.Roots() {
		if !exists(r.Path) {
			dirs[r.Path] = true
			if r.Kind == policy.Writable || r.Kind == policy.BaseWritable {
				rel, _ := filepath.Rel(h.Dir, r.Path)
				made = append(made, rel)
			}
		}
	}
	var probes []probe
	for d := range dirs {
		probes = append(probes, probe{d, policy.Read, "dir"}, probe{filepath.Join(d, ".cordon-probe"), policy.Write, "new"})
	}
	for _, f := range modelFiles {
		p := filepath.Join(t, f)
		probes = append(probes, probe{p, policy.Read, "file"}, probe{p, policy.Write, "append"})
	}
	// The fixture itself, an ancestor of every root.
	probes = append(probes, probe{h.Dir, policy.Read, "dir"}, probe{filepath.Join(h.Dir, ".cordon-probe"), policy.Write, "new"})
	slices.SortFunc(probes, func(a, b probe) int { return strings.Compare(a.path+a.kind, b.path+b.kind) })

	var sc strings.Builder
	sc.WriteString(`r() { if [ -d "$2" ]; then ls "$2" >/dev/null 2>&1; else cat "$2" >/dev/null 2>&1; fi && echo "$1 1" || echo "$1 0"; }
a() { ( : >> "$2" ) 2>/dev/null && echo "$1 1" || echo "$1 0"; }
n() { if ( : > "$2" ) 2>/dev/null; then rm -f "$2"; echo "$1 1"; else echo "$1 0"; fi; }
`)
	for i, pr := range probes {
		fn := map[string]string{"dir": "r", "file": "r", "append": "a", "new": "n"}[pr.kind]
		fmt.Fprintf(&sc, "%s %d '%s'\n", fn, i, pr.path)
	}
	l := h.Script(Policy{Deny: fp.DeniedRoots, Readonly: fp.ReadonlyRoots, Writable: fp.WritableRoots,
		Base: fp.BaseWritableRoots, Restrict: fp.RestrictWrites}, sc.String())
	// The landlock backend is stricter than the policy by design (a split
	// directory is frozen, a missing root is not made): its own model, the
	// plan the launch renders, is what the sandbox must equal, and that
	// model must never be wider than the policy's.
	var pl *landlock.Plan
	if h.Backend() == "landlock" {
		pl = h.landlockPlan(l)
	}
	snap := h.Snapshot()
	o := h.Launch(l)
	got := map[int]bool{}
	for _, line := range strings.Split(o.Stdout, "\n") {
		var i, v int
		if n, _ := fmt.Sscanf(line, "%d %d", &i, &v); n == 2 {
			got[i] = v == 1
		}
	}
	var bad []string
	for i, pr := range probes {
		real, ok := got[i]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %s: no answer", pr.op, pr.path))
			continue
		}
		want := canon.Access(pr.path, pr.op)
		if pl != nil {
			lw := planAccess(pl, canon, pr)
			if lw && !want {
				bad = append(bad, fmt.Sprintf("%-5s %s: the landlock plan allows what the policy does not (%s)", pr.op, pr.path, canon.Explain(pr.path).Reason))
			}
			if real != lw {
				bad = append(bad, fmt.Sprintf("%-5s %s: sandbox %v, landlock plan %v, policy %v (%s)", pr.op, pr.path, real, lw, want, strings.Join(pl.Explain(pr.path), "; ")))
			}
			continue
		}
		if real != want {
			v := canon.Explain(pr.path)
			bad = append(bad, fmt.Sprintf("%-5s %s: sandbox %v, model %v (%s)", pr.op, pr.path, real, want, v.Reason))
		}
	}
	if len(bad) > 0 {
		pj := canon.Policy()
		h.Errorf("seed %d: %d of %d probes disagree with the model\npolicy: deny %v readonly %v writable %v base %v restrict %v\n  %s",
			seed, len(bad), len(probes), pj.DeniedRoots, pj.ReadonlyRoots, pj.WritableRoots, pj.BaseWritableRoots, pj.RestrictWrites,
			strings.Join(bad, "\n  "))
	}
	if h.Backend() == "landlock" {
		made = nil // it makes no missing root
	}
	// A writable root the policy names and that does not exist is made
	// for its bind and stays, as a directory the command made would:
	// nothing else may change.
	h.Unchanged(snap, made...)
}

// landlockPlan is the plan the landlock backend renders for l, composed
// as 'cordon run' composes it, from the host as it is now.
func (h *H) landlockPlan(l Launch) *landlock.Plan {
	comp, err := workspace.Compose(l.Policy.Spec(h.env(l.Env), l.cordon(h.Attack())))
	if err != nil {
		h.Fatalf("compose the launch's policy: %v", err)
	}
	pl, err := launcher.LandlockPlan(comp.Policy)
	if err != nil {
		h.Fatalf("render the launch's landlock plan: %v", err)
	}
	return pl
}

// planAccess is the landlock backend's answer to pr: what the probe's
// command needs (ls: list; cat: read; append: write; a new file: make it
// and write it, then remove it), on what exists (the backend makes no
// missing root). A new file is the plan's where Landlock grants it, and
// elsewhere the entry gate's, which asks the model (MayChangeEntry).
func planAccess(pl *landlock.Plan, canon *policy.Canonical, pr probe) bool {
	switch pr.kind {
	case "dir":
		return exists(pr.path) && pl.Allows(pr.path, landlock.OpList)
	case "file":
		return pl.Allows(pr.path, landlock.OpRead)
	case "append":
		return pl.Allows(pr.path, landlock.OpWrite)
	}
	if !exists(filepath.Dir(pr.path)) {
		return false
	}
	if pl.Allows(pr.path, landlock.OpChange) && pl.Allows(pr.path, landlock.OpWrite) {
		return true
	}
	return canon.MayChangeEntry(pr.path) && canon.Access(pr.path, policy.Write)
}
