package seatbelt

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	return string(b)
}

// fullPolicy makes the renderer emit every kind of rule it has, in
// different paths from the probe's.
func fullPolicy() policy.FsSandboxPolicy {
	return policy.FsSandboxPolicy{
		ReadonlyRoots:     []string{"/", "/Users/cordon-full/w/.git/hooks", "/Users/cordon-full/w/d2/ro"},
		WritableRoots:     []string{"/Users/cordon-full/w", "/Users/cordon-full/d/carve", "/tmp/cordon-full"},
		BaseWritableRoots: []string{"/Users/cordon-full/state"},
		DeniedRoots:       []string{"/Users/cordon-full/d", "/Users/cordon-full/w/d2"},
		RestrictWrites:    true,
	}
}

// skeleton is a filter with its strings and parameters blanked: the shape
// a compiler sees, whatever the paths.
func skeleton(n sx) string {
	switch n.kind {
	case sxStr, sxRegex:
		return "_"
	case sxSym:
		if n.atom != "" && n.atom[0] >= '0' && n.atom[0] <= '9' {
			return "N"
		}
		return n.atom
	}
	if n.head() == "param" {
		return "P"
	}
	parts := make([]string, len(n.list))
	for i, c := range n.list {
		parts[i] = skeleton(c)
	}
	if h := n.head(); h == "require-any" || h == "require-all" {
		// How many alternatives there are is not a construct.
		set := map[string]bool{}
		for _, p := range parts[1:] {
			set[p] = true
		}
		parts = parts[:1]
		for p := range set {
			parts = append(parts, p)
		}
		sort.Strings(parts[1:])
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// shapes returns, for each rule head (action and operations), the set of
// filter skeletons it uses.
func shapes(t *testing.T, text string) map[string]map[string]bool {
	t.Helper()
	top, err := parseSx(text)
	require.NoError(t, err)
	out := map[string]map[string]bool{}
	for _, n := range top {
		head := []string{}
		fs := map[string]bool{}
		for _, a := range n.list {
			if a.kind == sxSym {
				head = append(head, a.atom)
			} else {
				fs[skeleton(a)] = true
			}
		}
		h := strings.Join(head, " ")
		if out[h] == nil {
			out[h] = map[string]bool{}
		}
		for f := range fs {
			out[h][f] = true
		}
	}
	return out
}

// constructs lists the operations and filter names a profile uses.
func constructs(t *testing.T, text string) []string {
	t.Helper()
	top, err := parseSx(text)
	require.NoError(t, err)
	set := map[string]bool{}
	var walk func(n sx, op bool)
	walk = func(n sx, op bool) {
		if n.kind == sxSym && op {
			set[n.atom] = true
		}
		if n.kind != sxList {
			return
		}
		if h := n.head(); h != "" && h != "allow" && h != "deny" && h != "version" {
			set[h] = true
		}
		for i, c := range n.list {
			walk(c, op && i > 0 && c.kind == sxSym)
		}
	}
	for _, n := range top {
		walk(n, n.head() == "allow" || n.head() == "deny")
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// TestProbeCoversEveryConstruct: whatever Render can emit, the probe
// profile detect compiles has the same rule heads with the same filter
// shapes. A probe reduced to (allow default), or a new construct the probe
// does not carry, fails here.
func TestProbeCoversEveryConstruct(t *testing.T) {
	probe, err := ProbeProfile()
	require.NoError(t, err)
	_, err = parseProfile(probe.SBPL, probe.ParamMap())
	require.NoError(t, err, "the probe profile itself must compile")
	have := shapes(t, probe.SBPL)

	var texts []string
	for _, opt := range []Options{{}, {Network: true}, {Devices: []string{"/dev/ttys042", "/dev/cu.x"}}} {
		for _, pol := range []policy.FsSandboxPolicy{fullPolicy(), {}, {RestrictWrites: true},
			{WritableRoots: []string{"/w"}, ReadonlyRoots: []string{"/w/ro"}, DeniedRoots: []string{"/w/ro/keys"}}} {
			_, prof := mustRender(t, pol, opt)
			texts = append(texts, prof.SBPL)
		}
	}
	for _, text := range texts {
		for head, fs := range shapes(t, text) {
			require.Contains(t, have, head, "the probe lacks a rule (%s …)", head)
			for f := range fs {
				require.True(t, have[head][f], "the probe lacks the filter %s in (%s …)", f, head)
			}
		}
	}

	// The mutation: the probe detect used to run covers none of it.
	old := shapes(t, "(version 1)(allow default)")
	require.Less(t, len(old), len(have))
	require.NotContains(t, old, "deny file-ioctl")
}

// TestProbeParameters: the probe's paths are fixed and reach the profile
// only as parameters, like a launch's; one has a space.
func TestProbeParameters(t *testing.T) {
	probe, err := ProbeProfile()
	require.NoError(t, err)
	spaced := false
	for _, p := range probe.Params {
		require.NotContains(t, probe.SBPL, p.Value+"\"")
		spaced = spaced || strings.Contains(p.Value, " ")
	}
	require.True(t, spaced)
	require.Contains(t, probe.SBPL, "(ioctl-command 2147578994)")
	require.Contains(t, probe.SBPL, "(deny network*)")
}
