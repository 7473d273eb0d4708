package seatbelt

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

// ---- the evaluator itself ----

func evalProfile(t *testing.T, text string, params map[string]string) *sbProfile {
	t.Helper()
	p, err := parseProfile(text, params)
	require.NoError(t, err)
	return p
}

func TestEvaluator(t *testing.T) {
	type check struct {
		op, path, vnode string
		want            bool
	}
	tests := []struct {
		name   string
		text   string
		params map[string]string
		checks []check
	}{
		{
			name: "default deny when nothing matches",
			text: `(version 1) (deny default) (allow file-read* (literal "/x"))`,
			checks: []check{
				{op: "file-read-data", path: "/x", want: true},
				{op: "file-read-data", path: "/y", want: false},
				{op: "file-write-data", path: "/x", want: false},
			},
		},
		{
			name: "last matching rule wins, deeper after shallower",
			text: `(version 1) (allow default)
				(deny file-read* (subpath "/a"))
				(allow file-read* (subpath "/a/b"))`,
			checks: []check{
				{op: "file-read-data", path: "/a", want: false},
				{op: "file-read-data", path: "/a/x", want: false},
				{op: "file-read-data", path: "/a/b", want: true},
				{op: "file-read-data", path: "/a/b/c", want: true},
				{op: "file-read-data", path: "/a/bc", want: false},
				{op: "file-read-data", path: "/ab", want: true},
			},
		},
		{
			name: "last matching rule wins, shallower after deeper",
			text: `(version 1) (allow default)
				(allow file-read* (subpath "/a/b"))
				(deny file-read* (subpath "/a"))`,
			checks: []check{
				{op: "file-read-data", path: "/a/b/c", want: false},
			},
		},
		{
			name: "subpath literal prefix boundaries",
			text: `(version 1) (allow default)
				(deny file-read-data (subpath "/s/b"))
				(deny file-read-data (literal "/l/b"))
				(deny file-read-data (prefix "/p/b"))
				(deny file-read-data (subpath "/"))
				(allow file-read-data (subpath "/ok"))`,
			checks: []check{
				{op: "file-read-data", path: "/ok/x", want: true},
				{op: "file-read-data", path: "/elsewhere", want: false}, // subpath "/" is everything
			},
		},
		{
			name: "subpath literal prefix boundaries without root",
			text: `(version 1) (allow default)
				(deny file-read-data (subpath "/s/b"))
				(deny file-read-data (literal "/l/b"))
				(deny file-read-data (prefix "/p/b"))`,
			checks: []check{
				{op: "file-read-data", path: "/s/b", want: false},
				{op: "file-read-data", path: "/s/b/c", want: false},
				{op: "file-read-data", path: "/s/bc", want: true},
				{op: "file-read-data", path: "/s", want: true},
				{op: "file-read-data", path: "/l/b", want: false},
				{op: "file-read-data", path: "/l/b/c", want: true},
				{op: "file-read-data", path: "/p/b", want: false},
				{op: "file-read-data", path: "/p/bc", want: false},
				{op: "file-read-data", path: "/p/b/c", want: false},
				{op: "file-read-data", path: "/p/a", want: true},
			},
		},
		{
			name: "regex is unanchored unless anchored",
			text: `(version 1) (allow default)
				(deny file-write* (regex #"^/dev/ttys[0-9]+$"))
				(deny file-write* (regex #"\.git/hooks"))`,
			checks: []check{
				{op: "file-write-data", path: "/dev/ttys003", want: false},
				{op: "file-write-data", path: "/dev/ttys", want: true},
				{op: "file-write-data", path: "/dev/ttys1/x", want: true},
				{op: "file-write-data", path: "/w/.git/hooks/pre-commit", want: false},
				{op: "file-write-data", path: "/w/xgit/hooks", want: true},
			},
		},
		{
			name: "wildcard operations",
			text: `(version 1) (allow default)
				(deny file-write* (subpath "/r"))
				(allow file-write-data (subpath "/r"))
				(deny network*)`,
			checks: []check{
				{op: "file-write-unlink", path: "/r/x", want: false},
				{op: "file-write-create", path: "/r/x", want: false},
				{op: "file-write-data", path: "/r/x", want: true},
				{op: "file-read-data", path: "/r/x", want: true},
				{op: "network-outbound", path: "", want: false},
			},
		},
		{
			name: "several filters in one rule match if any does",
			text: `(version 1) (allow default)
				(deny file-read* (literal "/a") (subpath "/b"))`,
			checks: []check{
				{op: "file-read-data", path: "/a", want: false},
				{op: "file-read-data", path: "/b/c", want: false},
				{op: "file-read-data", path: "/c", want: true},
			},
		},
		{
			name: "require-all any not and vnode-type",
			text: `(version 1) (allow default)
				(deny file-write-create (require-all (vnode-type SYMLINK) (require-any (literal "/a") (literal "/b"))))
				(deny file-read-data (require-all (subpath "/s") (require-not (literal "/s/open"))))`,
			checks: []check{
				{op: "file-write-create", path: "/a", vnode: "SYMLINK", want: false},
				{op: "file-write-create", path: "/b", vnode: "SYMLINK", want: false},
				{op: "file-write-create", path: "/a", vnode: "DIRECTORY", want: true},
				{op: "file-write-create", path: "/c", vnode: "SYMLINK", want: true},
				{op: "file-read-data", path: "/s/x", want: false},
				{op: "file-read-data", path: "/s/open", want: true},
			},
		},
		{
			name:   "params and string-append",
			text:   `(version 1) (allow default) (deny file-read* (subpath (param "R0"))) (allow file-read* (literal (string-append (param "R0") "/pub")))`,
			params: map[string]string{"R0": `/we"ird) dir`},
			checks: []check{
				{op: "file-read-data", path: `/we"ird) dir/x`, want: false},
				{op: "file-read-data", path: `/we"ird) dir/pub`, want: true},
				{op: "file-read-data", path: `/we"ird`, want: true},
			},
		},
		{
			name: "comments and escapes",
			text: "(version 1) ; a comment (deny default)\n(allow default)\n(deny file-read* (literal \"/a\\\"b\\\\c\")) ; (allow file-read*)",
			checks: []check{
				{op: "file-read-data", path: `/a"b\c`, want: false},
				{op: "file-read-data", path: `/a`, want: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := evalProfile(t, tt.text, tt.params)
			for _, c := range tt.checks {
				got, line, err := p.allowed(sbQuery{op: c.op, path: c.path, vnode: c.vnode})
				require.NoError(t, err)
				require.Equal(t, c.want, got, "%s %s %s (decided by line %d)", c.op, c.path, c.vnode, line)
			}
		})
	}
}

func TestEvaluatorRejects(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no version", `(allow default)`, "version"},
		{"unknown operation", `(version 1) (allow file-reed*)`, "unknown operation file-reed*"},
		{"unknown filter", `(version 1) (allow file-read* (subpth "/a"))`, "unknown filter"},
		{"unbound param", `(version 1) (allow file-read* (subpath (param "X")))`, `parameter "X" is not bound`},
		{"unclosed", `(version 1) (allow file-read* (subpath "/a")`, "unclosed"},
		{"stray paren", `(version 1))`, "unexpected )"},
		{"unterminated string", `(version 1) (allow file-read* (subpath "/a))`, "unterminated"},
		{"bad regex", `(version 1) (allow file-read* (regex #"(["))`, "missing"},
		{"not a rule", `(version 1) (permit file-read*)`, "want allow or deny"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseProfile(tt.text, nil)
			require.ErrorContains(t, err, tt.want)
		})
	}
	p := evalProfile(t, `(version 1) (allow default) (deny signal (target others))`, nil)
	_, _, err := p.allowed(sbQuery{op: "signal"})
	require.ErrorContains(t, err, "cannot evaluate")
	_, _, err = p.allowed(sbQuery{op: "file-read*", path: "/"})
	require.ErrorContains(t, err, "not a concrete operation")
}

// ---- the renderer against the model ----

// kernelPath is what the macOS kernel hands Seatbelt for a canonical path:
// the firmlinked top-level directories resolved into /private. Written out
// here, not taken from the renderer, so the test does not grade itself.
func kernelPath(p string) string {
	for _, f := range []string{"/tmp/", "/var/", "/etc/"} {
		if p == strings.TrimSuffix(f, "/") || strings.HasPrefix(p, f) {
			return "/private" + p
		}
	}
	return p
}

// isProperAncestor is policy.Ancestors' notion: a strict ancestor, not "/".
func isProperAncestor(a, p string) bool {
	return a != "/" && strings.HasPrefix(p, a+"/")
}

// checkAgainstModel asks the evaluator about every probe, under its short
// and its data-volume spelling, and compares with policy.Canonical.Access,
// plus the two documented extras: metadata of the unreadable ancestors of
// readable roots, and at writable ancestors of protected roots no unlink
// and no creation of anything but a directory.
func checkAgainstModel(t testing.TB, c *policy.Canonical, prof *Profile, probes []string) int {
	t.Helper()
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err, "profile:\n%s", prof.SBPL)
	roots := c.Roots()
	n := 0
	for _, p := range probes {
		read, write := c.Access(p, policy.Read), c.Access(p, policy.Write)
		traverse, protected := false, false
		for _, r := range roots {
			if !isProperAncestor(p, r.Path) {
				continue
			}
			if c.Access(r.Path, policy.Read) && !read {
				traverse = true
			}
			if (r.Kind == policy.Denied || r.Kind == policy.Readonly) && write {
				protected = true
			}
		}
		want := []struct {
			op, vnode string
			allow     bool
		}{
			{"file-read-data", "", read},
			{"file-read-xattr", "", read},
			{"process-exec", "", read},
			{"file-read-metadata", "", read || traverse},
			{"file-write-data", "", write},
			{"file-write-mode", "", write},
			{"file-write-create", "REGULAR-FILE", write && !protected},
			{"file-write-create", "DIRECTORY", write},
			{"file-write-create", "SYMLINK", write && !protected},
			{"file-write-create", "", write && !protected}, // a rename: type unknown
			{"file-write-unlink", "", write && !protected},
		}
		// The kernel may hand Seatbelt either spelling of a file on the
		// data volume; both must get the model's answer.
		spellings := []string{kernelPath(p)}
		if p != "/" {
			spellings = append(spellings, "/System/Volumes/Data"+kernelPath(p))
		}
		for _, w := range want {
			for _, sp := range spellings {
				q := sbQuery{op: w.op, path: sp, vnode: w.vnode}
				got, line, err := sb.allowed(q)
				require.NoError(t, err)
				if got != w.allow {
					v := c.Explain(p)
					require.Failf(t, "evaluator disagrees with the model",
						"%s %q (%s) at %q: seatbelt says %v (line %d), want %v (model: %s; traversal ancestor %v, protected ancestor %v)\npolicy: %+v\nprofile:\n%s\nparams: %q",
						w.op, q.path, w.vnode, p, got, line, w.allow, v.Reason, traverse, protected, c.Policy(), prof.SBPL, prof.Params)
				}
				n++
			}
		}
	}
	return n
}

// probesFor returns, for every root, the root, children, siblings that
// share its spelling as a prefix, and its ancestors; plus "/" and extra.
func probesFor(c *policy.Canonical, extra []string) []string {
	set := map[string]bool{"/": true}
	for _, p := range extra {
		set[p] = true
	}
	for _, r := range c.Roots() {
		p := r.Path
		for _, q := range []string{p, p + "/x", p + "/x/y", p + "/.git"} {
			set[filepath.Clean(q)] = true
		}
		if p != "/" {
			set[p+"c"] = true  // /a/b vs /a/bc
			set[p+" c"] = true // /a/b vs "/a/b c"
			set[p+".d/x"] = true
			set[filepath.Dir(p)+"/zz"] = true
		}
		for _, a := range policy.Ancestors(p) {
			set[a] = true
			set[a+"c"] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var genParts = []string{"a", "b", "bc", "b c", "x.txt", `q")`, "ké"}
var genTops = []string{"/cordon-gen", "/cordon-gen/a", "/tmp/cordon-gen", "/var/cordon-gen", "/etc/cordon-gen"}

func genPath(rng *rand.Rand) string {
	if rng.Intn(40) == 0 {
		return "/"
	}
	p := genTops[rng.Intn(len(genTops))]
	for range rng.Intn(4) {
		p += "/" + genParts[rng.Intn(len(genParts))]
	}
	return p
}

func genPolicy(rng *rand.Rand) policy.FsSandboxPolicy {
	p := policy.FsSandboxPolicy{RestrictWrites: rng.Intn(2) == 0}
	for range rng.Intn(9) {
		path := genPath(rng)
		switch rng.Intn(4) {
		case 0:
			if path != "/" {
				p.DeniedRoots = append(p.DeniedRoots, path)
			}
		case 1:
			p.ReadonlyRoots = append(p.ReadonlyRoots, path)
		case 2:
			p.WritableRoots = append(p.WritableRoots, path)
		case 3:
			p.BaseWritableRoots = append(p.BaseWritableRoots, path)
		}
	}
	return p
}

// TestDifferential is the Seatbelt half of "the backend implements the
// model": for thousands of generated policies (nested roots of all four
// kinds, both write modes, firmlinked parents, names that are prefixes of
// each other) the evaluated profile must answer every probe as Access does.
func TestDifferential(t *testing.T) {
	rng := rand.New(rand.NewSource(20260501))
	cases, checks, skipped := 0, 0, 0
	want := 3000
	if testing.Short() {
		want = 300
	}
	for cases < want {
		pol := genPolicy(rng)
		c, err := policy.Canonicalize(pol)
		if err != nil {
			skipped++ // the same path in two fields: a validation error, not a profile
			require.Contains(t, err.Error(), "both name", "%+v", pol)
			continue
		}
		prof, err := Render(c, Options{Network: rng.Intn(2) == 0})
		require.NoError(t, err, "%+v", pol)
		extra := make([]string, 0, 8)
		for range 8 {
			extra = append(extra, genPath(rng))
		}
		// Extra probes go through Canonicalize's resolution too, so they
		// are spelled as the model expects on this host.
		for i, e := range extra {
			if r, err := policy.Resolve(e); err == nil {
				extra[i] = r
			}
		}
		checks += checkAgainstModel(t, c, prof, probesFor(c, extra))
		cases++
	}
	t.Logf("%d policies, %d checks, %d generated policies rejected by validation", cases, checks, skipped)
}

// TestModelExamples pins a few decisions by hand, through the evaluator,
// that the differential test covers only statistically.
func TestModelExamples(t *testing.T) {
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		DeniedRoots:    []string{"/cordon-ex/d", "/cordon-ex/w/secret"},
		WritableRoots:  []string{"/cordon-ex/w", "/cordon-ex/d/carve"},
		ReadonlyRoots:  []string{"/cordon-ex/w/.git/hooks"},
		RestrictWrites: true,
	}, Options{})
	sb, err := parseProfile(prof.SBPL, prof.ParamMap())
	require.NoError(t, err)
	tests := []struct {
		op, path, vnode string
		want            bool
	}{
		{"file-read-data", "/cordon-ex/d/x", "", false},
		{"file-read-metadata", "/cordon-ex/d", "", true}, // traversal to the carve
		{"file-read-metadata", "/cordon-ex/d/other", "", false},
		{"file-read-data", "/cordon-ex/d", "", false}, // but not listable
		{"file-write-data", "/cordon-ex/d/carve/f", "", true},
		{"file-write-unlink", "/cordon-ex/w", "", false},      // ancestor of a protected root
		{"file-write-unlink", "/cordon-ex/w/.git", "", false}, // likewise
		{"file-write-create", "/cordon-ex/w/.git", "DIRECTORY", true},
		{"file-write-create", "/cordon-ex/w/.git", "SYMLINK", false},
		{"file-write-unlink", "/cordon-ex/w/src", "", true},
		{"file-write-create", "/cordon-ex/w/.git/hooks/pre-commit", "REGULAR-FILE", false},
		{"file-write-data", "/cordon-ex/w/secretary", "", true},
		{"file-read-data", "/cordon-ex/w/secret/k", "", false},
		{"file-write-data", "/usr/bin/x", "", false}, // restrictWrites
		{"file-write-data", "/dev/null", "", true},
		{"file-write-data", "/dev/ttys004", "", true},
		{"file-write-data", "/dev/fd/1", "", true},
		{"file-write-data", "/dev/disk0", "", false},
		{"network-outbound", "", "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %s", tt.op, tt.path, tt.vnode), func(t *testing.T) {
			got, line, err := sb.allowed(sbQuery{op: tt.op, path: tt.path, vnode: tt.vnode})
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "decided by line %d of\n%s", line, prof.SBPL)
		})
	}
}

// TestNetworkProxy: with a proxy port, the profile lets the sandbox reach
// that port of the loopback over TCP and nothing else of the network;
// without one, nothing; with the network on, everything.
func TestNetworkProxy(t *testing.T) {
	queries := []struct {
		name, op, proto, remote string
	}{
		{"the proxy", "network-outbound", "tcp", "localhost:49152"},
		{"another loopback port", "network-outbound", "tcp", "localhost:49153"},
		{"the proxy's port over UDP", "network-outbound", "udp", "localhost:49152"},
		{"a remote host", "network-outbound", "tcp", "93.184.216.34:443"},
		{"DNS", "network-outbound", "udp", "10.0.0.1:53"},
		{"a Unix socket", "network-outbound", "unix", "/var/run/docker.sock"},
		{"listening", "network-bind", "tcp", "localhost:8080"},
		{"accepting", "network-inbound", "tcp", "localhost:8080"},
	}
	for _, tc := range []struct {
		opt  Options
		want map[string]bool
	}{
		{Options{ProxyPort: 49152}, map[string]bool{"the proxy": true}},
		{Options{}, map[string]bool{}},
		{Options{Network: true}, nil},
	} {
		_, prof := mustRender(t, policy.FsSandboxPolicy{RestrictWrites: true}, tc.opt)
		sb, err := parseProfile(prof.SBPL, prof.ParamMap())
		require.NoError(t, err)
		for _, q := range queries {
			got, line, err := sb.allowed(sbQuery{op: q.op, proto: q.proto, remote: q.remote})
			require.NoError(t, err)
			want := tc.want == nil || tc.want[q.name]
			require.Equal(t, want, got, "%+v: %s (line %d)", tc.opt, q.name, line)
		}
	}
	c, _ := mustRender(t, policy.FsSandboxPolicy{}, Options{})
	_, err := Render(c, Options{ProxyPort: 70000})
	require.Error(t, err)
}
