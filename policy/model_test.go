package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestAccessMostSpecificRootWins(t *testing.T) {
	c, err := Canonicalize(FsSandboxPolicy{
		DeniedRoots:       []string{"/d", "/w/secret"},
		ReadonlyRoots:     []string{"/w/ro", "/u/ro"},
		WritableRoots:     []string{"/w", "/d/carve"},
		BaseWritableRoots: []string{"/base"},
		RestrictWrites:    true,
	})
	require.NoError(t, err)
	tests := []struct {
		path        string
		read, write bool
		root        string
	}{
		{"/", true, false, ""},
		{"/etc/passwd", true, false, ""},
		{"/d", false, false, "/d"},
		{"/d/x/y", false, false, "/d"},
		{"/d/carve", true, true, "/d/carve"},       // self carve
		{"/d/carve/deep", true, true, "/d/carve"},  // self carve
		{"/dd", true, false, ""},                   // not a prefix match
		{"/w", true, true, "/w"},                   // writable
		{"/w/secret/k", false, false, "/w/secret"}, // denied inside writable
		{"/w/ro/f", true, false, "/w/ro"},          // readonly inside writable
		{"/base/state", true, true, "/base"},       // base writable
		{"/u/ro", true, false, "/u/ro"},            // readonly
		{"/w/secretary", true, true, "/w"},         // sibling spelled alike
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			v := c.Explain(tt.path)
			require.Equal(t, tt.read, c.Access(tt.path, Read), v.Reason)
			require.Equal(t, tt.write, c.Access(tt.path, Write), v.Reason)
			require.Equal(t, tt.root, v.Root)
			require.Equal(t, tt.read, v.Read)
			require.Equal(t, tt.write, v.Write)
		})
	}
}

func TestUnrestrictedReadonlyInsideWritable(t *testing.T) {
	c, err := Canonicalize(FsSandboxPolicy{
		ReadonlyRoots: []string{"/w/ro"},
		WritableRoots: []string{"/w"},
		DeniedRoots:   []string{"/w/ro/d"},
	})
	require.NoError(t, err)
	require.True(t, c.Access("/elsewhere", Write))
	require.False(t, c.Access("/w/ro/x", Write))
	require.True(t, c.Access("/w/ro/x", Read))
	require.False(t, c.Access("/w/ro/d/x", Read))
}

func TestRootsSortedShallowToDeep(t *testing.T) {
	c, err := Canonicalize(FsSandboxPolicy{
		DeniedRoots:   []string{"/a/b/c", "/z"},
		WritableRoots: []string{"/a/b", "/a/b/c/d/e"},
		ReadonlyRoots: []string{"/a"},
	})
	require.NoError(t, err)
	var got []string
	for _, r := range c.Roots() {
		got = append(got, r.Path)
	}
	require.Empty(t, cmp.Diff([]string{"/a", "/z", "/a/b", "/a/b/c", "/a/b/c/d/e"}, got))
}

func TestCanonicalizeResolvesSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.Symlink(real, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink("../real/sub", filepath.Join(real, "rel")))
	rdir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)

	got, err := Resolve(filepath.Join(dir, "link", "missing", "tail"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(rdir, "real", "missing", "tail"), got)

	got, err = Resolve(filepath.Join(dir, "link", "rel", "x"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(rdir, "real", "sub", "x"), got)

	got, err = Resolve(filepath.Join(dir, "link", "..", "real"))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(rdir, "real"), got, ".. applies to the resolved link target's parent")

	// With writes restricted the link is not the sandbox's to swap.
	c, err := Canonicalize(FsSandboxPolicy{RestrictWrites: true, DeniedRoots: []string{filepath.Join(dir, "link")}})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(rdir, "real")}, c.Policy().DeniedRoots)
	// Without, it is: the sandbox could make a real file of that name.
	_, err = Canonicalize(FsSandboxPolicy{DeniedRoots: []string{filepath.Join(dir, "link")}})
	require.ErrorContains(t, err, filepath.Join(dir, "link")+" is a symlink: ")
}

// TestResolveAsEvalSymlinks: on existing paths, spelt with empty and "."
// components, trailing slashes, ".." and links (relative, absolute, to a
// link, at the end), Resolve answers what filepath.EvalSymlinks does;
// through one resolver too, where what a lookup found is reused.
func TestResolveAsEvalSymlinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/b/c", "x/y"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for link, target := range map[string]string{
		"a/rel":     "b/c",
		"a/abs":     filepath.Join(dir, "x"),
		"a/b/up":    "../../x/y",
		"x/chain":   "../a/rel",
		"x/y/slash": "/" + dir[1:] + "//a/./b/",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, link)))
	}
	r := newResolver()
	defer r.close()
	for _, spelt := range []string{
		"a/b/c", "a//b/./c/", "a/rel", "a/rel/", "a/abs/y", "a/b/up", "a/b/up/..",
		"x/chain", "x/chain/..", "x/y/slash/c", "a/../x/./y", "x/y/slash/up/slash",
	} {
		p := dir + "/" + spelt
		want, err := filepath.EvalSymlinks(p)
		require.NoError(t, err, spelt)
		got, err := Resolve(p)
		require.NoError(t, err, spelt)
		require.Equal(t, want, got, spelt)
		got, _, err = resolveVia(p, r)
		require.NoError(t, err, spelt)
		require.Equal(t, want, got, spelt+" through one resolver")
	}
}

func TestCanonicalizeErrorsNameInput(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(dir, "b"), filepath.Join(dir, "a")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
	tests := []struct {
		name string
		p    FsSandboxPolicy
		want []string
	}{
		{"relative", FsSandboxPolicy{DeniedRoots: []string{"rel/x"}}, []string{"deniedRoots", `"rel/x"`, "relative"}},
		{"empty", FsSandboxPolicy{WritableRoots: []string{""}}, []string{"writableRoots", "empty path"}},
		{"nul", FsSandboxPolicy{ReadonlyRoots: []string{"/a\x00b"}}, []string{"readonlyRoots", "NUL"}},
		{"loop", FsSandboxPolicy{DeniedRoots: []string{filepath.Join(dir, "a", "x")}}, []string{"deniedRoots", filepath.Join(dir, "a", "x"), "too many levels"}},
		{"two fields", FsSandboxPolicy{DeniedRoots: []string{"/x/"}, WritableRoots: []string{"/x"}}, []string{`deniedRoots "/x/"`, `writableRoots "/x"`, "only one field"}},
		{"deny root", FsSandboxPolicy{DeniedRoots: []string{"/"}}, []string{"denying /"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Canonicalize(tt.p)
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParseRejectsUnknownKeys(t *testing.T) {
	_, err := Parse("p.json", []byte(`{"deniedRoots":["/x"],"denyRoots":["/y"]}`))
	require.ErrorContains(t, err, `"denyRoots" is not a key`)
	require.ErrorContains(t, err, "p.json")
	_, err = Parse("p.json", []byte(`{"deniedRoots":["/x"]} {}`))
	require.ErrorContains(t, err, "trailing")
	p, err := Parse("p.json", []byte(`{"deniedRoots":["/x"],"restrictWrites":true}`))
	require.NoError(t, err)
	require.Equal(t, FsSandboxPolicy{DeniedRoots: []string{"/x"}, RestrictWrites: true}, p)
	_, err = Load(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorContains(t, err, "missing.json")
}

// TestParseFileExact: a policy file's keys match only in their exact
// spelling and only once, at every level (encoding/json matched them in
// any case and let the last of two win, so a root could be dropped
// without a word), and a value of the wrong kind is named in plain words,
// not in Go's.
func TestParseFileExact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"wrong case", `{"DeniedRoots":["/tmp/x"]}`, `policy p.json: "DeniedRoots" is not a key; did you mean "deniedRoots"?`},
		{"wrong case beside the right one", `{"deniedroots":["/tmp/y"],"deniedRoots":["/tmp/z"]}`, `policy p.json: "deniedroots" is not a key; did you mean "deniedRoots"?`},
		{"given twice", `{"deniedRoots":["/a"],"deniedRoots":["/b"]}`, `policy p.json: "deniedRoots" is given twice`},
		{"snake case", `{"restrict_writes":true}`, `policy p.json: "restrict_writes" is not a key; did you mean "restrictWrites"?`},
		{"network wrong case", `{"Network":{}}`, `policy p.json: "Network" is not a key; did you mean "network"?`},
		{"network key wrong case", `{"network":{"AllowDomains":["x.com"]}}`, `policy p.json: "network.AllowDomains" is not a key; did you mean "network.allowDomains"?`},
		{"network key twice", `{"network":{"allowDomains":["a.com"],"allowDomains":["b.com"]}}`, `policy p.json: "network.allowDomains" is given twice`},
		{"network twice", `{"network":{"allowDomains":["a.com"]},"network":{}}`, `policy p.json: "network" is given twice`},
		{"bool as a string", `{"restrictWrites":"yes"}`, `policy p.json: "restrictWrites" must be true or false, not a string`},
		{"roots as a string", `{"readonlyRoots":"/x"}`, `policy p.json: "readonlyRoots" must be an array of strings, not a string`},
		{"a root not a string", `{"writableRoots":["/x",{}]}`, `policy p.json: "writableRoots" must be an array of strings; item 2 is an object`},
		{"network not an object", `{"network":["x.com"]}`, `policy p.json: "network" must be an object, not an array`},
		{"not an object", `[]`, `policy p.json: a JSON object is expected, not an array`},
		{"unknown key", `{"denyRoots":[]}`, `policy p.json: "denyRoots" is not a key; the keys are baseWritableRoots, deniedRoots, readonlyRoots, writableRoots, restrictWrites, network, env and allowUnixSockets`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFile("p.json", []byte(tt.in))
			require.EqualError(t, err, tt.want)
		})
	}
	f, err := ParseFile("p.json", []byte(`{"deniedRoots":["/a"],"restrictWrites":false,"network":{"allowDomains":["x.com"],"denyDomains":null}}`))
	require.NoError(t, err)
	require.Equal(t, []string{"/a"}, f.DeniedRoots)
	require.Equal(t, []string{"x.com"}, f.Network.AllowDomains)
}

func TestCanonicalStatRemembersWhatItSaw(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	c, err := Canonicalize(FsSandboxPolicy{DeniedRoots: []string{dir + "/d", dir + "/f", dir + "/missing"}})
	require.NoError(t, err)
	for p, want := range map[string][2]bool{"d": {true, true}, "f": {true, false}, "missing": {false, false}} {
		e, d := c.Stat(filepath.Join(dir, p))
		require.Equal(t, want, [2]bool{e, d}, p)
	}
}

// A ".." that climbs from a missing component back into what exists looks
// the rest up again: a link met after it is followed, so the canonical
// path holds no symbolic link.
func TestResolveDotDotAfterMissing(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(d, "real"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(d, "real"), filepath.Join(d, "link")))
	got, err := Resolve(filepath.Join(d, "missing") + "/../link/secret")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(d, "real", "secret"), got)
	got, err = Resolve(filepath.Join(d, "missing", "deeper") + "/../x")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(d, "missing", "x"), got, "still missing: lexical")
}
