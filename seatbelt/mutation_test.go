package seatbelt

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// TestMutations undoes one defence at a time in a rendered profile's text
// and requires that a named check then fails, as the conformance suite's
// mutation check does for bwrap. On a Mac the matching conformance cases
// are data-volume-spelling, rename-symlink-onto-ancestor and
// tty-controlling-terminal; here the evaluator stands in for the kernel.
func TestMutations(t *testing.T) {
	const home = "/Users/cordon-mut"
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots:  []string{home + "/proj"},
		DeniedRoots:    []string{home + "/.ssh"},
		ReadonlyRoots:  []string{home + "/proj/a/b/hooks"},
		RestrictWrites: true,
	}, Options{})
	type query struct {
		op, path, vnode string
		ioctl           uint64
		want            bool
	}
	checks := map[string][]query{
		"data-volume-spelling": {
			{op: "file-read-data", path: DataVolume + home + "/.ssh/id_ed25519", want: false},
			{op: "file-write-data", path: DataVolume + home + "/proj/a/b/hooks/pre-commit", want: false},
		},
		"rename-symlink-onto-ancestor": {
			{op: "file-write-create", path: home + "/proj/a", want: false},
			{op: "file-write-create", path: home + "/proj/a", vnode: "DIRECTORY", want: true},
		},
		"tiocsti": {
			{op: "file-ioctl", path: "/dev/ttys001", ioctl: TIOCSTI, want: false},
		},
	}
	failures := func(text string, qs []query) int {
		sb, err := parseProfile(text, prof.ParamMap())
		if err != nil {
			return 1 // a profile that does not compile fails every check
		}
		n := 0
		for _, q := range qs {
			got, _, err := sb.allowed(sbQuery{op: q.op, path: q.path, vnode: q.vnode, ioctl: q.ioctl})
			require.NoError(t, err)
			if got != q.want {
				n++
			}
		}
		return n
	}
	for name, qs := range checks {
		require.Zero(t, failures(prof.SBPL, qs), "%s fails on the real profile", name)
	}
	for _, m := range []struct {
		name, check string
		from        *regexp.Regexp
		to          string
	}{
		{"no data-volume spelling", "data-volume-spelling",
			regexp.MustCompile(` \((subpath|literal) \(string-append "/System/Volumes/Data" \(param "[A-Z0-9]+"\)\)\)`), ""},
		{"symlinks only", "rename-symlink-onto-ancestor",
			regexp.MustCompile(regexp.QuoteMeta(`(require-not (vnode-type DIRECTORY))`)), `(vnode-type SYMLINK)`},
		{"symbolic ioctl", "tiocsti",
			regexp.MustCompile(`\(ioctl-command \d+\)`), `(ioctl-command TIOCSTI)`},
		{"no ioctl deny", "tiocsti",
			regexp.MustCompile(`\(deny file-ioctl [^\n]*\n`), "\n"},
	} {
		t.Run(m.name, func(t *testing.T) {
			mutant := m.from.ReplaceAllString(prof.SBPL, m.to)
			require.NotEqual(t, prof.SBPL, mutant, "the mutation changed nothing")
			require.Positive(t, failures(mutant, checks[m.check]), "%s still passes without the defence", m.check)
		})
	}
}
