package seatbelt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/policy"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the renderer's output")

func mustRender(t testing.TB, p policy.FsSandboxPolicy, opt Options) (*policy.Canonical, *Profile) {
	t.Helper()
	c, err := policy.Canonicalize(p)
	require.NoError(t, err)
	prof, err := Render(c, opt)
	require.NoError(t, err)
	return c, prof
}

// golden is the profile as one reviewable file: the SBPL, then each
// parameter quoted so control characters stay visible.
func golden(p *Profile) string {
	var b strings.Builder
	b.WriteString(p.SBPL)
	b.WriteString("\n;;;; parameters\n")
	for _, pr := range p.Params {
		fmt.Fprintf(&b, "%s=%q\n", pr.Name, pr.Value)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	const home = "/Users/cordon-golden"
	tests := []struct {
		name string
		pol  policy.FsSandboxPolicy
		opt  Options
	}{
		{name: "empty"},
		{name: "empty_restrict_network", pol: policy.FsSandboxPolicy{RestrictWrites: true}, opt: Options{Network: true}},
		{name: "workspace", pol: policy.FsSandboxPolicy{
			WritableRoots:     []string{home + "/proj", "/private/tmp/cordon-501/proj"},
			BaseWritableRoots: []string{home + "/.cordon/state"},
			ReadonlyRoots: []string{
				home + "/proj/.git/hooks", home + "/proj/.git/config",
				home + "/proj/.vscode", home + "/proj/.envrc",
			},
			DeniedRoots:    []string{home + "/.ssh", home + "/.aws", home + "/.docker/config.json"},
			RestrictWrites: true,
		}},
		{name: "nested_carves", pol: policy.FsSandboxPolicy{
			DeniedRoots:    []string{"/srv/agents", "/srv/agents/a1/secret"},
			WritableRoots:  []string{"/srv/agents/a1", "/srv/agents/a1/secret/carve"},
			ReadonlyRoots:  []string{"/srv/agents/a0"},
			RestrictWrites: true,
		}},
		{name: "readonly_in_writable_unrestricted", pol: policy.FsSandboxPolicy{
			WritableRoots: []string{"/w"},
			ReadonlyRoots: []string{"/w/ro", "/w/ro/again/.git"},
			DeniedRoots:   []string{"/w/ro/keys"},
		}, opt: Options{Network: true}},
		{name: "firmlinks", pol: policy.FsSandboxPolicy{
			WritableRoots:  []string{"/tmp/cordon-golden-w", "/var/cordon-golden/cache"},
			DeniedRoots:    []string{"/etc/cordon-golden-secret"},
			RestrictWrites: true,
		}},
		{name: "network_proxy", pol: policy.FsSandboxPolicy{RestrictWrites: true, WritableRoots: []string{home + "/proj"}},
			opt: Options{ProxyPort: 49152}},
		{name: "devices", pol: policy.FsSandboxPolicy{RestrictWrites: true},
			opt: Options{Devices: []string{"/dev/ttys042", "/dev/cu.cordon"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, prof := mustRender(t, tt.pol, tt.opt)
			got := golden(prof)
			file := filepath.Join("testdata", tt.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "run go test ./seatbelt -run TestGolden -update to create it")
			require.Empty(t, cmp.Diff(string(want), got), "%s differs; -update rewrites it", file)
			// Every golden profile is one the evaluator accepts.
			_, err = parseProfile(prof.SBPL, prof.ParamMap())
			require.NoError(t, err)
		})
	}
}

func TestArgv(t *testing.T) {
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots: []string{"/w"},
		DeniedRoots:   []string{"/w/s"},
	}, Options{})
	got := prof.Argv("/run/p.sb", []string{"sh", "-c", "echo hi"})
	want := []string{
		"/usr/bin/sandbox-exec", "-f", "/run/p.sb",
		"-D", "R0=/w", "-D", "R1=/w/s",
		"--", "sh", "-c", "echo hi",
	}
	require.Empty(t, cmp.Diff(want, got))
	require.Empty(t, cmp.Diff(map[string]string{"R0": "/w", "R1": "/w/s"}, prof.ParamMap()))
}

// TestInjection renders one policy shape twice, once with tame names and
// once with names full of SBPL syntax: the text must be identical and no
// path may appear in it.
func TestInjection(t *testing.T) {
	nasty := []string{
		`a"b`,
		`x)(allow default)(`,
		`;(deny default)`,
		"new\nline(allow file-write*)",
		`back\slash\"`,
		`#"regex"`,
	}
	shape := func(names []string) policy.FsSandboxPolicy {
		p := policy.FsSandboxPolicy{RestrictWrites: true}
		dir := "/cordon-inject"
		for i, n := range names {
			dir += "/" + n
			switch i % 3 {
			case 0:
				p.WritableRoots = append(p.WritableRoots, dir)
			case 1:
				p.DeniedRoots = append(p.DeniedRoots, dir)
			case 2:
				p.ReadonlyRoots = append(p.ReadonlyRoots, dir)
			}
		}
		return p
	}
	tame := make([]string, len(nasty))
	for i := range tame {
		tame[i] = fmt.Sprintf("n%d", i)
	}
	_, plain := mustRender(t, shape(tame), Options{Devices: []string{"/dev/tame"}})
	c, evil := mustRender(t, shape(nasty), Options{Devices: []string{`/dev/x")(allow default`}})

	require.Empty(t, cmp.Diff(plain.SBPL, evil.SBPL), "paths changed the profile text")
	require.Len(t, evil.Params, len(plain.Params))
	for _, pr := range evil.Params {
		if pr.Value != "/" {
			require.NotContains(t, evil.SBPL, pr.Value)
		}
	}
	for _, n := range nasty {
		require.NotContains(t, evil.SBPL, n)
	}
	// And the evaluator, binding the nasty values, still agrees with the
	// model on them.
	checkAgainstModel(t, c, evil, probesFor(c, nil))
}

func TestRenderErrors(t *testing.T) {
	t.Run("nil policy", func(t *testing.T) {
		_, err := Render(nil, Options{})
		require.ErrorContains(t, err, "nil policy")
	})
	t.Run("bad device", func(t *testing.T) {
		c, err := policy.Canonicalize(policy.FsSandboxPolicy{})
		require.NoError(t, err)
		for _, d := range []string{"", "dev/tty", "/dev/../etc/passwd", "/dev/a\x00b"} {
			_, err := Render(c, Options{Devices: []string{d}})
			require.Error(t, err, "%q", d)
			require.Contains(t, err.Error(), "device")
			if d != "" {
				require.Contains(t, err.Error(), fmt.Sprintf("%q", d))
			}
		}
	})
	t.Run("firmlink collision", func(t *testing.T) {
		// On Linux /tmp is real, so Canonicalize keeps both spellings and
		// only the renderer sees them meet; on macOS Canonicalize does.
		c, err := policy.Canonicalize(policy.FsSandboxPolicy{
			DeniedRoots:   []string{"/tmp/cordon-collide"},
			WritableRoots: []string{"/private/tmp/cordon-collide"},
		})
		if err == nil {
			_, err = Render(c, Options{})
		}
		require.Error(t, err)
		require.Contains(t, err.Error(), "/tmp/cordon-collide")
	})
	t.Run("too large", func(t *testing.T) {
		long := strings.Repeat("d", 200)
		var p policy.FsSandboxPolicy
		for i := range 3000 {
			p.DeniedRoots = append(p.DeniedRoots, fmt.Sprintf("/cordon-big/%s/%d", long, i))
		}
		c, err := policy.Canonicalize(p)
		require.NoError(t, err)
		_, err = Render(c, Options{})
		require.ErrorIs(t, err, ErrTooLarge)
		require.Contains(t, err.Error(), "3000 roots")
	})
}

func TestSameFieldTwiceAfterFirmlinks(t *testing.T) {
	// Two spellings of one path in the same field are harmless, as in
	// Canonicalize: one rule, one parameter.
	_, prof := mustRender(t, policy.FsSandboxPolicy{
		WritableRoots: []string{"/tmp/cordon-same", "/private/tmp/cordon-same"},
	}, Options{})
	require.Len(t, prof.Params, 1)
	require.Equal(t, "/private/tmp/cordon-same", prof.Params[0].Value)
}

// A hard link or a clone of a protected file is a new name for it that no
// path rule protects (Seatbelt checks paths, not files): link(2) and
// clonefile(2) are checked on the source, and refused where the model
// refuses writing (link) or reading (clone) it.
func TestLinkAndCloneFollowTheModel(t *testing.T) {
	p := policy.FsSandboxPolicy{
		WritableRoots:  []string{"/w"},
		DeniedRoots:    []string{"/w/secret"},
		ReadonlyRoots:  []string{"/w/ro"},
		RestrictWrites: true,
	}
	_, prof := mustRender(t, p, Options{})
	sb := evalProfile(t, prof.SBPL, prof.ParamMap())
	for _, tt := range []struct {
		op, path string
		want     bool
	}{
		{"file-link", "/w/file", true},
		{"file-link", "/w/ro/file", false},
		{"file-link", "/w/secret/id", false},
		{"file-link", "/elsewhere/file", false}, // restrictWrites: not writable
		{"file-clone", "/w/secret/id", false},
		{"file-clone", "/w/ro/file", true},
		{"file-clone", "/w/file", true},
	} {
		got, _, err := sb.allowed(sbQuery{op: tt.op, path: tt.path})
		require.NoError(t, err)
		require.Equal(t, tt.want, got, "%s %s", tt.op, tt.path)
	}
}
