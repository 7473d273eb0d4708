package seatbelt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/scale"
	"github.com/cordon-sandbox/cordon/policy"
)

// Tests that the profile compiles on every supported macOS, each written to
// fail if its point is undone.

// TestIoctlByNumber: TIOCSTI is denied by number; the symbol would make
// macOS 13 and 14 refuse the whole profile.
func TestIoctlByNumber(t *testing.T) {
	require.EqualValues(t, 2147578994, TIOCSTI)
	// _IOW('t', 114, char), computed here rather than trusted.
	const iocIn, parmMask = 0x80000000, 0x1fff
	require.EqualValues(t, uint64(iocIn|(1&parmMask)<<16|'t'<<8|114), TIOCSTI)

	_, prof := mustRender(t, policy.FsSandboxPolicy{}, Options{})
	require.Contains(t, prof.SBPL, "(deny file-ioctl (ioctl-command 2147578994))")
	require.NotContains(t, prof.SBPL, "(ioctl-command TIOCSTI)")
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	for _, tc := range []struct {
		ioctl uint64
		want  bool
	}{{TIOCSTI, false}, {0x40087468 /* TIOCGWINSZ */, true}} {
		got, _, err := sb.allowed(sbQuery{op: "file-ioctl", path: "/dev/ttys003", ioctl: tc.ioctl})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "ioctl %#x", tc.ioctl)
	}

	// The evaluator refuses the symbolic form, as macOS 13 and 14 do.
	_, err = parseProfile(strings.Replace(prof.SBPL, "2147578994", "TIOCSTI", 1), prof.ParamMap())
	require.ErrorContains(t, err, "unbound variable: TIOCSTI")
}

// longBase is a 64-character directory, the shape of a deep home or
// monorepo path, under which the 2,000-root policy grows its rules.
var longBase = "/Users/cordon-scale/" + strings.Repeat("deep-monorepo-path/", 3)[:44]

// ruleSizes returns the path bytes of every rule of a parsed profile.
func ruleSizes(sb *sbProfile) []int {
	out := make([]int, len(sb.rules))
	for i, r := range sb.rules {
		for _, f := range r.filters {
			out[i] += sb.patternBytes(f)
		}
	}
	return out
}

// TestRulesSplit: on the 2,000-root benchmark policy under a long base the
// traversal and move rules list far more than one compiled pattern can
// hold; each must be split under MaxRulePatternBytes, deterministically,
// and still be the model.
func TestRulesSplit(t *testing.T) {
	require.Len(t, longBase, 64)
	pol := scale.Policy2000(longBase)
	c, err := policy.Canonicalize(pol)
	require.NoError(t, err)
	prof, err := Render(c, Options{})
	require.NoError(t, err)
	again, err := Render(c, Options{})
	require.NoError(t, err)
	require.Equal(t, prof.SBPL, again.SBPL, "rendering is not deterministic")
	require.Equal(t, prof.Params, again.Params)

	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	total, largest := 0, 0
	for _, n := range ruleSizes(sb) {
		total += n
		largest = max(largest, n)
		require.LessOrEqual(t, n, MaxRulePatternBytes)
	}
	require.Greater(t, total, 2*maxPatternBytes, "the policy is too small to need splitting")
	require.Greater(t, strings.Count(prof.SBPL, "(allow file-read-metadata\n"), 4, "traversal not split")
	require.Greater(t, strings.Count(prof.SBPL, "(deny file-write-unlink\n"), 4, "unlink denies not split")
	t.Logf("%d rules, %d bytes of paths, largest rule %d bytes, %d bytes of SBPL, %d bytes of parameters",
		len(sb.rules), total, largest, len(prof.SBPL), paramBytes(prof.Params))

	all, n := probesFor(c, nil), 60
	if testing.Short() {
		n = 10
	}
	var probes []string
	for i := 0; i < len(all); i += len(all)/n + 1 {
		probes = append(probes, all[i])
	}
	checkAgainstModel(t, c, prof, probes)
}

// TestUnsplitRuleRefused is the mutation of TestRulesSplit: without the
// split, the same policy yields a rule Seatbelt would refuse, and the
// evaluator says so.
func TestUnsplitRuleRefused(t *testing.T) {
	c, err := policy.Canonicalize(scale.Policy2000(longBase))
	require.NoError(t, err)
	defer func(b int) { ruleBudget = b }(ruleBudget)
	ruleBudget = 1 << 30
	prof, err := Render(c, Options{})
	require.NoError(t, err)
	_, err = parseProfile(prof.SBPL, prof.ParamMap())
	require.ErrorContains(t, err, "past the 65535 bytes of one compiled pattern")
}

// TestSplitBoundary pins the split itself: consecutive, in order, each run
// as large as fits, a path too large for any run alone.
func TestSplitBoundary(t *testing.T) {
	defer func(b int) { ruleBudget = b }(ruleBudget)
	ruleBudget = 10
	r := renderer{names: map[string]string{}}
	r.rules("(h", ")", []filter{{"a", 4}, {"b", 4}, {"c", 4}, {"d", 30}, {"e", 1}})
	require.Equal(t, "(h\n  a\n  b)\n(h\n  c)\n(h\n  d)\n(h\n  e)\n", r.b.String())
}

// TestDataVolumeSpelling: a denied file read through
// /System/Volumes/Data/... is denied, a root given in that spelling is
// folded into the short one, and the two spellings of one path in
// different fields are an error.
func TestDataVolumeSpelling(t *testing.T) {
	const home = "/Users/cordon-dv"
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots:  []string{home + "/proj"},
		DeniedRoots:    []string{home + "/.ssh", DataVolume + home + "/.aws"},
		ReadonlyRoots:  []string{home + "/proj/.git/hooks"},
		RestrictWrites: true,
	}, Options{})
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	for _, v := range prof.Params {
		require.False(t, strings.HasPrefix(v.Value, DataVolume), "parameter %s=%s kept the data-volume spelling", v.Name, v.Value)
	}
	for _, tc := range []struct {
		op, path, vnode string
		want            bool
	}{
		{"file-read-data", home + "/.ssh/id_ed25519", "", false},
		{"file-read-data", DataVolume + home + "/.ssh/id_ed25519", "", false},
		{"file-read-data", home + "/.aws/credentials", "", false},
		{"file-read-data", DataVolume + home + "/.aws/credentials", "", false},
		{"file-write-data", DataVolume + home + "/proj/.git/hooks/pre-commit", "", false},
		{"file-write-unlink", DataVolume + home + "/proj/.git", "", false},
		{"file-write-data", DataVolume + home + "/proj/main.go", "", true},
		{"file-read-data", DataVolume + "/usr/bin/true", "", true},
	} {
		got, line, err := sb.allowed(sbQuery{op: tc.op, path: tc.path, vnode: tc.vnode})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %s (line %d)", tc.op, tc.path, line)
	}

	c, err := policy.Canonicalize(policy.FsSandboxPolicy{
		DeniedRoots:   []string{home + "/x"},
		WritableRoots: []string{DataVolume + home + "/x"},
	})
	require.NoError(t, err) // different strings to the model on Linux...
	_, err = Render(c, Options{})
	require.ErrorContains(t, err, "both") // ...one path on macOS
}

// TestRenamedSymlinkOntoAncestor: at a writable ancestor of a protected
// root, nothing but a directory may appear, by creation or by rename (whose
// destination check may not know the type of what arrives), so the
// protected path cannot be sent through a link to a writable place.
func TestRenamedSymlinkOntoAncestor(t *testing.T) {
	const ws = "/Users/cordon-rn/proj"
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots:  []string{ws, "/private/tmp/cordon-rn"},
		ReadonlyRoots:  []string{ws + "/a/b/.git/hooks"},
		RestrictWrites: true,
	}, Options{})
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	for _, anc := range []string{ws + "/a", ws + "/a/b", ws + "/a/b/.git"} {
		for _, sp := range []string{anc, DataVolume + anc} {
			for _, tc := range []struct {
				op, vnode string
				want      bool
			}{
				{"file-write-create", "SYMLINK", false},
				{"file-write-create", "", false}, // rename(2) onto it
				{"file-write-create", "REGULAR-FILE", false},
				{"file-write-create", "DIRECTORY", true}, // mkdir -p, git init
				{"file-write-unlink", "", false},         // rename away
			} {
				got, line, err := sb.allowed(sbQuery{op: tc.op, path: sp, vnode: tc.vnode})
				require.NoError(t, err)
				require.Equal(t, tc.want, got, "%s %q at %s (line %d)", tc.op, tc.vnode, sp, line)
			}
		}
	}
	// The link itself may be made elsewhere; only its arrival is refused.
	got, _, err := sb.allowed(sbQuery{op: "file-write-create", path: "/private/tmp/cordon-rn/l", vnode: "SYMLINK"})
	require.NoError(t, err)
	require.True(t, got)
}

// TestServiceDenialsIgnorePath: launchd jobs, LaunchServices opens and
// Apple Events are denied as operations, without a path filter, so a copy
// of open or osascript under another name is refused the same; the exec
// denies of the originals are only for a clear message.
func TestServiceDenialsIgnorePath(t *testing.T) {
	_, prof := mustRender(t, policy.FsSandboxPolicy{WritableRoots: []string{"/private/tmp/cordon-ls"}}, Options{Network: true})
	for _, rule := range []string{"(deny job-creation)\n", "(deny lsopen)\n", "(deny appleevent-send)\n"} {
		require.Contains(t, prof.SBPL, rule)
	}
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"process-exec", "/usr/bin/open", false},
		{"process-exec", "/private/tmp/cordon-ls/notopen", true}, // the literal misses a copy...
		{"lsopen", "", false},                                    // ...the service check does not
		{"appleevent-send", "", false},
		{"job-creation", "", false},
	} {
		got, line, err := sb.allowed(sbQuery{op: tc.op, path: tc.path})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %s (line %d)", tc.op, tc.path, line)
	}
	// No program is let out of the sandbox: setuid programs fail rather
	// than run unconfined (see the package documentation).
	require.NotContains(t, prof.SBPL, "no-sandbox")
}

// TestEveryConstructDocumented: each operation and filter the renderer
// emits has a row in the compatibility table of doc.go.
func TestEveryConstructDocumented(t *testing.T) {
	doc := readDoc(t)
	for _, opt := range []Options{{Devices: []string{"/dev/ttys042"}}, {ProxyPort: 3128}} {
		_, prof := mustRender(t, fullPolicy(), opt)
		for _, c := range constructs(t, prof.SBPL) {
			require.Contains(t, doc, fmt.Sprintf("\n//\t%s ", c), "doc.go's table lacks %s", c)
		}
	}
}

// TestRootsAboveTheDataVolume: a root at /System, /System/Volumes or the
// data volume contains the data spelling of every path, so it comes before
// the others, and a path it lets the process write is protected under that
// spelling too.
func TestRootsAboveTheDataVolume(t *testing.T) {
	const home = "/Users/cordon-above"
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots:  []string{DataVolume, "/Applications/cordon-w"},
		ReadonlyRoots:  []string{"/System"},
		DeniedRoots:    []string{home + "/.ssh", "/Users/cordon-d"},
		RestrictWrites: true,
	}, Options{})
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", DataVolume + "/Users/cordon-d/f", false}, // deeper than the data volume, really
		{"file-read-data", DataVolume + home + "/.ssh/id", false},
		{"file-write-data", DataVolume + home + "/notes", true},
		{"file-write-unlink", DataVolume + home, false}, // writable there, and the parent of .ssh
		{"file-write-unlink", DataVolume + "/Users", false},
		{"file-write-data", DataVolume + "/Applications/cordon-w/x", true},
		{"file-write-data", "/Applications/cordon-w/x", true},
		{"file-write-data", "/System/Library/x", false},
		{"file-write-data", home + "/notes", false}, // restrictWrites, short spelling
	} {
		got, line, err := sb.allowed(sbQuery{op: tc.op, path: tc.path})
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %s (line %d)\n%s", tc.op, tc.path, line, prof.SBPL)
	}
}
