package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

func TestDetectCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("CORDON_SANDBOX", "")
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		code     int
		stdout   []string
		stderr   string
		jsonKeys bool
	}{
		{name: "help teaches", args: []string{"--help"}, code: exitOK,
			stdout: []string{"Usage: cordon detect", "fix", "Exit status", "--fresh"}},
		{name: "bad backend", args: []string{"--backend", "chroot"}, code: exitUsage,
			stderr: "cordon detect: --backend \"chroot\": want auto, bwrap, native, landlock or seatbelt\n"},
		{name: "no sandbox", args: []string{"--backend", "none"}, code: exitUsage,
			stderr: `cordon detect: --backend "none": want auto, bwrap, native, landlock or seatbelt`},
		{name: "stray argument", args: []string{"bwrap"}, code: exitUsage, stderr: `unexpected argument "bwrap"`},
		{name: "unknown flag", args: []string{"--nope"}, code: exitUsage, stderr: "cordon detect: unknown flag --nope"},
		{name: "seatbelt on linux", args: []string{"--backend", "seatbelt", "--fresh"}, code: exitFail,
			stdout: []string{"backend: seatbelt", "usable:  no", "reason:  seatbelt (sandbox-exec) exists only on macOS"}},
		{name: "a sentinel set on the host is not trusted", args: []string{"--backend", "bwrap", "--json"}, env: map[string]string{"CORDON_SANDBOX": "seatbelt"}, code: exitOK,
			stdout: []string{`"usable":true`, `"backend":"bwrap"`}, jsonKeys: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "seatbelt on linux" && runtime.GOOS != "linux" {
				t.Skip("linux only")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"detect"}, tc.args...), nil, &out, &errb)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out.String(), errb.String())
			for _, s := range tc.stdout {
				require.Contains(t, out.String(), s)
			}
			require.Contains(t, errb.String(), tc.stderr)
			if tc.jsonKeys {
				var m map[string]any
				require.NoError(t, json.Unmarshal(out.Bytes(), &m))
				keys := []string{}
				for k := range m {
					keys = append(keys, k)
				}
				require.ElementsMatch(t, []string{"backend", "path", "version", "usable", "reason", "cordon"}, keys)
			}
		})
	}
}

// runInside runs the helper test function name of this binary, with arg,
// inside a sandbox that 'cordon run --workspace' launches, and returns
// what it printed; the launch must succeed.
func runInside(t *testing.T, name, arg string) string {
	t.Helper()
	var out, errb bytes.Buffer
	argv, env := testenv.SubprocessArgs(name, arg)
	// The workspace is this package's directory, the helper's working
	// directory: it must be in sight inside, and a checkout under the
	// host's /tmp is not unless it is a root (the private /tmp).
	wd, err := os.Getwd()
	require.NoError(t, err)
	args := []string{"run", "--workspace", wd}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	args = append(append(args, "--"), argv...)
	code := run(context.Background(), args, nil, &out, &errb)
	require.Equal(t, 0, code, out.String()+errb.String())
	return out.String()
}

func TestDetectCLINestedForReal(t *testing.T) {
	testenv.RequireBwrap(t)
	for _, tc := range []struct {
		args string
		want []string
	}{
		{"--json", []string{`"usable":true`, "already inside a cordon sandbox"}},
		{"--human", []string{"nested:  yes"}},
	} {
		out := runInside(t, "TestHelperDetectInside", tc.args)
		for _, w := range tc.want {
			require.Contains(t, out, w)
		}
	}
}

// TestHelperDetectInside runs 'cordon detect' inside a sandbox.
func TestHelperDetectInside(t *testing.T) {
	args := testenv.InSubprocess(t) // for TestDetectCLINestedForReal
	var a []string
	if args == "--json" {
		a = []string{"--json"}
	}
	var out bytes.Buffer
	run(context.Background(), append([]string{"detect"}, a...), nil, &out, os.Stderr)
	os.Stdout.Write(out.Bytes())
}

// TestDetectNativeLandlock: for the native backend, detect says which
// Landlock ABI confines the sandbox, or that it has one wall, in both
// forms; bwrap's JSON keeps its five keys.
func TestDetectNativeLandlock(t *testing.T) {
	testenv.RequireNative(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("CORDON_SANDBOX", "")
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"detect", "--backend", "native", "--json"}, nil, &out, &errb), errb.String())
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	ll, _ := m["landlock"].(string)
	require.Regexp(t, `^(ABI \d+ in force|.*one wall)`, ll)
	out.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"detect", "--backend", "native"}, nil, &out, &errb), errb.String())
	require.Contains(t, out.String(), "landlock: "+ll+"\n")
}
