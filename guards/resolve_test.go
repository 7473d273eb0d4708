package guards

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// workspace builds ws/{src/main.go, link-out -> outside, link-in -> src,
// dangling -> outside/new, loop -> loop} next to an outside directory.
func workspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link-out")))
	require.NoError(t, os.Symlink("src", filepath.Join(ws, "link-in")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(ws, "dangling")))
	require.NoError(t, os.Symlink("loop", filepath.Join(ws, "loop")))
	// A link whose target ends in "/": the rest is joined after it.
	require.NoError(t, os.Symlink(outside+"/", filepath.Join(ws, "link-out-slash")))
	require.NoError(t, os.Symlink("src/", filepath.Join(ws, "link-in-slash")))
	return ws, outside
}

func TestScopeResolve(t *testing.T) {
	ws, outside := workspace(t)
	s, err := NewScope(ws)
	require.NoError(t, err)
	tests := []struct {
		name, in, want string
		inside         bool
	}{
		{"relative", "src/main.go", ws + "/src/main.go", true},
		{"dot", ".", ws, true},
		{"absolute inside", ws + "/src", ws + "/src", true},
		{"not yet existing", "src/new/file.go", ws + "/src/new/file.go", true},
		{"dotdot escape", "../outside/x", outside + "/x", false},
		{"dotdot inside", "src/../src/main.go", ws + "/src/main.go", true},
		{"absolute outside", "/etc/passwd", "/etc/passwd", false},
		{"symlinked parent", "link-out/secret", outside + "/secret", false},
		{"symlink inside", "link-in/main.go", ws + "/src/main.go", true},
		{"dangling link", "dangling", outside + "/new", false},
		// ".." applies after the link, as the kernel does it.
		{"dotdot after link", "link-out/../ws/src", filepath.Dir(outside) + "/ws/src", true},
		{"dotdot after link escapes", "link-in/../../outside", outside, false},
		{"absolute through ws", ws + "/../outside", outside, false},
		// A doubled slash is an empty component, never a restart at "/":
		// "src//<ws>/x" is ws/src/<ws>/x to the kernel.
		{"doubled slash", "src//main.go", ws + "/src/main.go", true},
		{"doubled slash before an absolute-looking rest", "link-out//" + ws[1:] + "/src", outside + "/" + ws[1:] + "/src", false},
		{"absolute with a doubled slash", ws + "//link-out" + ws, outside + ws, false},
		{"link target ending in a slash", "link-out-slash" + ws + "/src/main.go", outside + ws + "/src/main.go", false},
		{"relative link target ending in a slash", "link-in-slash/main.go", ws + "/src/main.go", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, inside, err := s.Resolve(tt.in)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.inside, inside)
		})
	}
}

func TestScopeResolveErrors(t *testing.T) {
	ws, _ := workspace(t)
	s, err := NewScope(ws)
	require.NoError(t, err)
	for _, in := range []string{"", "a\x00b", "loop/x", "src/main.go/x", "~/.ssh/id_rsa", "~root/.ssh/id_rsa", "~", "missing/../link-out/x", "src/a/b/../../main.go"} {
		t.Run(in, func(t *testing.T) {
			_, inside, err := s.Resolve(in)
			require.Error(t, err)
			require.False(t, inside)
		})
	}
}

func TestNewScopeErrors(t *testing.T) {
	ws, _ := workspace(t)
	for _, in := range []string{"", filepath.Join(ws, "src", "main.go"), filepath.Join(ws, "missing"), filepath.Join(ws, "loop")} {
		_, err := NewScope(in)
		require.Error(t, err, "workspace %q", in)
	}
}

func TestGlobPrefix(t *testing.T) {
	tests := []struct {
		in, prefix      string
		dynamic, climbs bool
	}{
		{"src/**/*.go", "src", true, false},
		{"*.go", ".", true, false},
		{"/etc/*", "/etc", true, false},
		{"/*", "/", true, false},
		{"../*/x", "..", true, false},
		{"src/*/../../..", "src", true, true},
		{"a/{b,c}/d", "a", true, false},
		{"plain/file", "plain/file", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, d, c := GlobPrefix(tt.in)
			require.Equal(t, []any{tt.prefix, tt.dynamic, tt.climbs}, []any{p, d, c})
		})
	}
}

func TestCrossAgent(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "agents")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "b"), 0o755))
	// A symlinked spelling of the root must be caught in both directions.
	alias := filepath.Join(base, "alias")
	require.NoError(t, os.Symlink(root, alias))
	g, err := NewCrossAgent(alias, "a", "p")
	require.NoError(t, err)
	tests := []struct {
		name             string
		path             string
		recursive, write bool
		denied           bool
	}{
		{"own dir", root + "/a/x", false, true, false},
		{"parent read", root + "/p/x", false, false, false},
		{"parent write", root + "/p/x", false, true, true},
		{"sibling", root + "/b/secret", false, false, true},
		{"sibling through alias", alias + "/b/secret", false, false, true},
		{"root itself", root, false, false, true},
		{"recursive at ancestor", base, true, false, true},
		{"recursive at filesystem root", "/", true, false, true},
		{"plain read of ancestor", base, false, false, false},
		{"recursive elsewhere", "/usr", true, false, false},
		{"recursive in own dir", root + "/a", true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := g.Check(tt.recursive, tt.write, tt.path)
			require.Equal(t, tt.denied, why != "", "reason %q", why)
		})
	}
	_, err = NewCrossAgent(root, "", "")
	require.Error(t, err)
	_, err = NewCrossAgent(root, "../b", "")
	require.Error(t, err)
}
