package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
)

// snapshot records every name, mode and content under dir, so a test can
// assert that the host is byte-for-byte what it was.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, dir), fi.Mode())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out = append(out, line)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

func TestRunBadInput(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "data.txt"), []byte("keep"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "noexec.sh"), []byte("echo hi"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bad.json"), []byte(`{"deniedRoots":["/x"],"denyRoots":[]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "broken.json"), []byte(`{"deniedRoots":[`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "case.json"), []byte(`{"DeniedRoots":["/tmp/x"]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "yes.json"), []byte(`{"restrictWrites":"yes"}`), 0o644))
	loops := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(loops, "b"), filepath.Join(loops, "a")))
	require.NoError(t, os.Symlink(filepath.Join(loops, "a"), filepath.Join(loops, "b")))
	before := snapshot(t, ws)
	tests := []struct {
		name string
		args []string
		code int
		want string // the input the message must name
	}{
		{"relative deny", []string{"--deny", "rel/x"}, exitUsage, `"rel/x"`},
		{"empty deny", []string{"--deny", ""}, 2, `--deny "": the path is empty`},
		{"empty workspace", []string{"--workspace", ""}, 2, `--workspace "": the path is empty`},
		{"empty policy", []string{"--policy", ""}, 2, `--policy "": the path is empty`},
		{"empty audit", []string{"--audit", ""}, 2, `--audit "": the path is empty`},
		{"policy not UTF-8", []string{"--policy", writeFile(t, "{\"deniedRoots\":[\"/tmp/a\xffb\"]}")}, 125, `: not valid UTF-8 at byte offset 23 (0xff)`},
		{"NUL in policy file", []string{"--policy", writeFile(t, `{"deniedRoots":["/a\u0000b"]}`)}, 125, "NUL"},
		{"relative in policy file", []string{"--policy", writeFile(t, `{"writableRoots":["x/y"]}`)}, 125, `"x/y"`},
		{"symlink loop", []string{"--deny", filepath.Join(loops, "a", "x")}, 125, filepath.Join(loops, "a", "x")},
		{"missing policy file", []string{"--policy", filepath.Join(ws, "nope.json")}, 125, "nope.json"},
		{"unknown key", []string{"--policy", filepath.Join(ws, "bad.json")}, 125, `"denyRoots"`},
		{"malformed policy", []string{"--policy", filepath.Join(ws, "broken.json")}, 125, "broken.json"},
		{"same path twice", []string{"--deny", ws, "--writable", ws}, 125, ws},
		{"missing workspace", []string{"--workspace", filepath.Join(ws, "nope")}, 125, "nope"},
		{"unknown backend", []string{"--backend", "jail"}, exitUsage, `cordon run: --backend "jail": want auto, bwrap, native, landlock, seatbelt or none`},
		{"not found in PATH", []string{"--workspace", ws, "--", "no-such-command-xyz"}, 127, "no-such-command-xyz"},
		{"no such file", []string{"--workspace", ws, "--", filepath.Join(ws, "nope")}, 127, filepath.Join(ws, "nope")},
		{"not executable", []string{"--workspace", ws, "--", filepath.Join(ws, "noexec.sh")}, 126, "noexec.sh"},
		{"directory", []string{"--workspace", ws, "--", ws}, 126, ws + ": cannot execute: is a directory"},
		{"empty command", []string{"--workspace", ws, "--", ""}, exitUsage, "cordon run: the command is empty"},
		{"agents root without agent", []string{"--agents-root", ws}, 125, "an agent id (--agent ID) is required"},
		{"denied command", []string{"--deny", "/usr/bin", "--", "/usr/bin/true"}, 126, "/usr/bin/true"},
		{"empty domain pattern", []string{"--workspace", ws, "--allow-domain", ""}, exitUsage, `--allow-domain "": empty pattern`},
		{"star alone", []string{"--workspace", ws, "--allow-domain", "*"}, exitUsage, `"*": * alone`},
		{"scheme in pattern", []string{"--workspace", ws, "--allow-domain", "https://example.com"}, exitUsage, `"https://example.com": a pattern is a host`},
		{"port out of range", []string{"--workspace", ws, "--allow-domain", "example.com:70000"}, exitUsage, `"example.com:70000": port "70000" out of range`},
		{"bad deny pattern", []string{"--workspace", ws, "--allow-domain", "example.com", "--deny-domain", "*.*.x"}, exitUsage, `--deny-domain "*.*.x": `},
		{"unknown preset", []string{"--workspace", ws, "--allow-domain", "@cpan"}, exitUsage, `"@cpan": no such preset`},
		{"deny without allow", []string{"--workspace", ws, "--deny-domain", "example.com"}, 125, "--deny-domain without --allow-domain"},
		{"allowlist and network on", []string{"--workspace", ws, "--network", "on", "--allow-domain", "example.com"}, 125, "--network on and a domain allowlist (example.com)"},
		{"bad pattern in policy file", []string{"--policy", writeFile(t, `{"network":{"allowDomains":["x.com:0"]}}`)}, 125, `"x.com:0"`},
		{"unknown key in network object", []string{"--policy", writeFile(t, `{"network":{"allow":["x.com"]}}`)}, 125, `"network.allow" is not a key`},
		// Keys match in their exact spelling, once; values of the wrong
		// kind are named in plain words, with the file.
		{"key in another case", []string{"--policy", filepath.Join(ws, "case.json")}, 125,
			`cordon run: policy ` + filepath.Join(ws, "case.json") + `: "DeniedRoots" is not a key; did you mean "deniedRoots"?`},
		{"key in another case beside it", []string{"--policy", writeFile(t, `{"deniedroots":["/tmp/y"],"deniedRoots":["/tmp/z"]}`)}, 125,
			`: "deniedroots" is not a key; did you mean "deniedRoots"?`},
		{"key twice", []string{"--policy", writeFile(t, `{"deniedRoots":["/a"],"deniedRoots":["/b"]}`)}, 125, `: "deniedRoots" is given twice`},
		{"network key in another case", []string{"--policy", writeFile(t, `{"network":{"AllowDomains":["x.com"]}}`)}, 125,
			`: "network.AllowDomains" is not a key; did you mean "network.allowDomains"?`},
		{"bool as a string", []string{"--policy", filepath.Join(ws, "yes.json")}, 125,
			`cordon run: policy ` + filepath.Join(ws, "yes.json") + `: "restrictWrites" must be true or false, not a string`},
		{"allow-read without workspace", []string{"--allow-read", ws}, exitUsage, "--allow-read needs --workspace"},
		{"allowlist without a sandbox", []string{"--workspace", ws, "--backend", "none", "--allow-domain", "example.com"}, 125, "needs a sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--") || tt.args[len(tt.args)-2] != "--" {
				args = append(args, "--", "true")
			}
			code, _, stderr := runCLI(t, "", args...)
			require.Equal(t, tt.code, code, stderr)
			require.Contains(t, stderr, tt.want)
			require.Empty(t, cmp.Diff(before, snapshot(t, ws)), "bad input changed the host")
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestRunExitStatus(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	for _, tt := range []struct {
		script string
		code   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -TERM $$", 128 + 15},
		{"kill -KILL $$", 128 + 9},
		{`case "$CORDON_SANDBOX" in bwrap|native) exit 0;; esac; exit 1`, 0},
	} {
		t.Run(tt.script, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", "run", "--workspace", ws, "--", "sh", "-c", tt.script)
			require.Equal(t, tt.code, code, stderr)
		})
	}
}

func TestRunWorkspaceLeavesHostUnchanged(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644))
	before := snapshot(t, ws)
	code, out, stderr := runCLI(t, "", "run", "--workspace", ws, "--", "sh", "-c",
		`cd "$0" && cat a.txt && ls -a && echo x > .git/hooks/post-checkout || echo y > .vscode/settings.json || echo z > .envrc || echo blocked`, ws)
	require.Equal(t, 0, code, out+stderr)
	// cat's "a" (no newline), ls -a's names, then "blocked". The listing
	// inside is the host's: nothing stands for the absent protected names.
	require.True(t, strings.HasPrefix(out, "a") && strings.HasSuffix(out, "\nblocked\n"), out)
	got := strings.Split(strings.TrimSuffix(out[1:], "\nblocked\n"), "\n")
	slices.Sort(got)
	require.Equal(t, []string{".", "..", ".git", "a.txt"}, got, "the listing inside is the host's")
	require.Empty(t, cmp.Diff(before, snapshot(t, ws)), "nothing left behind, at once")
}

// TestRunRelativePolicyFile: a --policy file named relative to the
// working directory, inside the workspace, is read-only in the sandbox
// like one named absolutely (a relative name was once resolved from /,
// so the file the sandbox could rewrite for the next launch stayed
// writable).
func TestRunRelativePolicyFile(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	const orig = `{"readonlyRoots":[]}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(ws, "pol.json"), []byte(orig), 0o644))
	t.Chdir(ws)
	code, out, stderr := runCLI(t, "", "run", "--workspace", ".", "--policy", "pol.json", "--", "sh", "-c",
		`echo '{"writableRoots":["/"]}' > pol.json && echo WROTE; echo work > out.txt && echo WORK`)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "WORK")
	require.NotContains(t, out, "WROTE")
	b, err := os.ReadFile(filepath.Join(ws, "pol.json"))
	require.NoError(t, err)
	require.Equal(t, orig, string(b), "the policy file is unchanged on the host")
}

// TestRunPolicyRepeatable: --policy A --policy B launches with both
// files merged, and both are read-only in the sandbox (a second --policy
// once replaced the first without a word: A's denied root was readable
// and A itself writable).
func TestRunPolicyRepeatable(t *testing.T) {
	testenv.RequireBwrap(t)
	ws := t.TempDir()
	for _, n := range []string{"secret-a", "secret-b"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, n), []byte("SECRET"), 0o644))
	}
	a, b := filepath.Join(ws, "a.json"), filepath.Join(ws, "b.json")
	origA, origB := `{"deniedRoots":["`+ws+`/secret-a"]}`, `{"deniedRoots":["`+ws+`/secret-b"]}`
	require.NoError(t, os.WriteFile(a, []byte(origA), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(origB), 0o644))
	t.Chdir(ws)
	code, out, stderr := runCLI(t, "", "run", "--workspace", ".", "--policy", a, "--policy", "b.json", "--", "sh", "-c",
		`cat secret-a && echo READ-A; cat secret-b && echo READ-B; echo '{}' > a.json && echo WROTE-A; echo '{}' > b.json && echo WROTE-B; echo work > out.txt && echo WORK`)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "WORK")
	for _, w := range []string{"SECRET", "READ-A", "READ-B", "WROTE-A", "WROTE-B"} {
		require.NotContains(t, out, w)
	}
	for f, orig := range map[string]string{a: origA, b: origB} {
		got, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Equal(t, orig, string(got), "%s is unchanged on the host", f)
	}
}

// TestRunWorkspaceThroughSymlink: a workspace named through a symlink is
// allowed, and cordon says what it resolved to.
func TestRunWorkspaceThroughSymlink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	code, _, stderr := runCLI(t, "", "run", "--backend", "none", "--workspace", link, "--", "true")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "--workspace "+link+" resolves to "+real)
	code, _, stderr = runCLI(t, "", "run", "--backend", "none", "--workspace", real, "--", "true")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "resolves to")
}

// 'cordon run --audit FILE' records the launch before the sandbox starts,
// and the sandbox cannot change the log or its anchor, even in its
// workspace; a log that is a symlink is refused and nothing runs.
func TestRunAudit(t *testing.T) {
	testenv.RequireBwrap(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(t.TempDir(), "state"))
	log := filepath.Join(ws, ".cordon", "run.jsonl")
	require.NoError(t, os.Mkdir(filepath.Dir(log), 0o700))
	code, out, stderr := runCLI(t, "", "run", "--workspace", ws, "--audit", log, "--", "sh", "-c",
		`echo x >> "$0" && echo APPENDED; (: > "$0.head") && echo TRUNCATED; rm -f "$0" && echo REMOVED; echo work > "$1/w.txt"`, log, ws)
	require.Equal(t, 0, code, out+stderr)
	require.NotContains(t, out, "APPENDED")
	require.NotContains(t, out, "TRUNCATED")
	require.NotContains(t, out, "REMOVED")
	require.FileExists(t, filepath.Join(ws, "w.txt"))
	code, vout, _ := runCLI(t, "", "audit", "verify", log)
	require.Equal(t, exitOK, code, vout)
	require.Contains(t, vout, "1 records")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(b), `"kind":"launch"`)
	require.Contains(t, string(b), `echo work`)

	link := filepath.Join(ws, "link.jsonl")
	require.NoError(t, os.Symlink(filepath.Join(ws, "target"), link))
	code, out, stderr = runCLI(t, "", "run", "--workspace", ws, "--audit", link, "--", "sh", "-c", `echo RAN`)
	require.Equal(t, exitCordonError, code)
	require.NotContains(t, out, "RAN")
	require.Contains(t, stderr, link)
	require.NoFileExists(t, filepath.Join(ws, "target"))
}

// TestLeanBinary: cordon's binary does not link net/http (the proxy
// frames HTTP itself): every launch pays for the start of what it links.
func TestLeanBinary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	testenv.Need(t, "the go command", err)
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, p := range strings.Fields(string(out)) {
		require.NotContains(t, []string{"net/http", "crypto/tls", "crypto/x509"}, p, "cordon links %s", p)
	}
}

// Flags and settings that change nothing are said so, not taken silently.
func TestRunSaysWhatChangesNothing(t *testing.T) {
	ws := t.TempDir()
	code, _, stderr := runCLI(t, "", "run", "--backend", "none", "--workspace", ws,
		"--allow-read", filepath.Join(ws, "notes.txt"), "--writable-path-dir", "/nonexistent-dir", "--", "true")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "--allow-read "+filepath.Join(ws, "notes.txt")+" changes nothing")
	require.Contains(t, stderr, "--writable-path-dir /nonexistent-dir changes nothing")
	code, _, stderr = runCLI(t, "", "verify", "--workers", "0")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "--workers 0: give 1 or more")
}
