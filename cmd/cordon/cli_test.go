package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/audit"
	"github.com/cordon-sandbox/cordon/internal/state"
)

// runCLI runs cordon in this process with args and stdin, as main does,
// and returns its exit status and what it wrote on stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// badValues are, for each command with a valued flag, a value the flag
// refuses before anything runs, and the message that names it.
var badValues = map[string]struct {
	args []string
	want string
}{
	"run":              {[]string{"--backend", "jail", "--", "true"}, `cordon run: --backend "jail": want auto, bwrap, native, landlock, seatbelt or none`},
	"profile":          {[]string{"--network", "maybe"}, `cordon profile: --network "maybe": want on or off`},
	"explain":          {[]string{"--json=maybe", "x"}, `cordon explain: --json "maybe": want true or false`},
	"detect":           {[]string{"--backend", "chroot"}, "cordon detect: --backend \"chroot\": want auto, bwrap, native, landlock or seatbelt\n"},
	"verify":           {[]string{"--workers", "many"}, `cordon verify: --workers "many": want a number`},
	"decide":           {[]string{"--workspace", ".", "x"}, `cordon decide: unexpected argument "x"`}, // its values are checked later (125): an extra argument instead
	"hook claude-code": {[]string{"--sandbox-bash=maybe"}, `cordon hook claude-code: --sandbox-bash "maybe": want true or false`},
	"hook codex":       {[]string{"--allow-sandboxed=maybe"}, `cordon hook codex: --allow-sandboxed "maybe": want true or false`},
	"hook gemini":      {[]string{"--sandbox-bash=maybe"}, `cordon hook gemini: --sandbox-bash "maybe": want true or false`},
	"hook copilot":     {[]string{"--no-audit=maybe"}, `cordon hook copilot: --no-audit "maybe": want true or false`},
	"hook cursor":      {[]string{"--no-audit=maybe"}, `cordon hook cursor: --no-audit "maybe": want true or false`},
	"audit verify":     {[]string{"a.jsonl", "b.jsonl"}, `cordon audit verify: unexpected argument "b.jsonl"`},
	"audit key export": {[]string{"a.key", "b.key"}, `cordon audit key export: unexpected argument "b.key"`},
	"audit forget":     {nil, `cordon audit forget: name the LOG`},
	"audit path":       {[]string{"x"}, `cordon audit path: unexpected argument "x"`},
	"init":             {[]string{"--dry-run=maybe", "codex"}, `cordon init: --dry-run "maybe": want true or false`},
	"doctor":           {[]string{"x"}, `cordon doctor: unexpected argument "x"`},
	"demo":             {[]string{"--backend", "none"}, `cordon demo: --backend "none": want auto, bwrap, native, landlock or seatbelt`},
	"version":          {[]string{"--json=maybe"}, `cordon version: --json "maybe": want true or false`},
	"completion":       {[]string{"tcsh"}, `cordon completion: unknown shell "tcsh": want bash, zsh or fish`},
}

// TestCLITable holds every command to one contract (docs/design.md,
// section 4): --help and -h print help on stdout and exit 0; an unknown
// flag, a bad flag value or a wrong number of arguments exits 2 with a
// message on stderr that starts with "cordon COMMAND: ", and the usage.
// None of these runs anything.
func TestCLITable(t *testing.T) {
	var all []*command
	var walk func(c *command)
	walk = func(c *command) {
		all = append(all, c)
		for _, s := range c.subs {
			walk(s)
		}
	}
	walk(commands)
	seen := map[string]bool{}
	for _, c := range all {
		words := strings.Fields(c.name)
		prefix := strings.TrimSpace("cordon " + c.name)
		t.Run(strings.Join(append([]string{"cordon"}, words...), "_"), func(t *testing.T) {
			for _, h := range []string{"--help", "-h", "-help"} {
				code, out, errs := runCLI(t, "", append(words, h)...)
				require.Equal(t, exitOK, code, errs)
				require.True(t, strings.HasPrefix(out, "Usage: "+prefix), "%s %s: %q", c.name, h, out)
				require.NotContains(t, out, "` + ", "Go source leaked into the help text")
				require.Empty(t, errs)
			}
			code, out, errs := runCLI(t, "", append(words, "--no-such-flag")...)
			require.Equal(t, exitUsage, code, errs)
			require.Empty(t, out)
			require.True(t, strings.HasPrefix(errs, prefix+": unknown flag --no-such-flag\nusage: "), errs)

			if c.subs != nil {
				code, out, errs := runCLI(t, "", append(words, "frob")...)
				require.Equal(t, exitUsage, code, errs)
				require.Empty(t, out)
				require.True(t, strings.HasPrefix(errs, prefix+`: unknown command "frob": want `), errs)
				return
			}
			bad, ok := badValues[c.name]
			require.True(t, ok, "no bad value for %s in badValues", c.name)
			seen[c.name] = true
			args := append(words, bad.args...)
			code, out, errs = runCLI(t, "", args...)
			require.Equal(t, exitUsage, code, errs)
			require.Empty(t, out)
			require.True(t, strings.HasPrefix(errs, bad.want), errs)
			require.Contains(t, errs, "\nusage: "+prefix)
			require.NotContains(t, errs, "cordon "+c.name+": "+lastWord(c.name)+" ", "says the command twice")
		})
	}
	for name := range badValues {
		require.True(t, seen[name], "badValues names %q, which is no command", name)
	}
}

// TestCLIHelpIsNotAnArgument: after a command's arguments, --help is
// still help, and after "--" it is an argument.
func TestCLIHelpIsNotAnArgument(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(state.EnvDir, t.TempDir())
	t.Chdir(dir)
	code, out, _ := runCLI(t, "", "audit", "verify", "x.jsonl", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "Usage: cordon audit verify")
	code, _, errs := runCLI(t, "", "audit", "forget", "--", "--help")
	require.Equal(t, exitOK, code, errs)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a flag was taken for a file")
}

// TestCLIMessagesNameTheCommandOnce: an error that already starts with
// the command's verb does not say it twice.
func TestCLIMessagesNameTheCommandOnce(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	_, err := audit.UserKey()
	require.NoError(t, err)
	missing := filepath.Join(t.TempDir(), "nope.jsonl")
	code, _, errs := runCLI(t, "", "audit", "verify", missing)
	require.Equal(t, exitCordonError, code, "a log that cannot be read gets no answer either way")
	require.Equal(t, "cordon audit verify: "+missing+":", strings.SplitAfter(errs, missing+":")[0])
}

// TestAuditLogDirectoryIsNotMade: an --audit FILE whose directory is
// missing is an error naming it, in every command that writes a log, and
// the directory is not made (run, hook and demo made it, /nonexist
// included); cordon's own default log in its state directory still is.
func TestAuditLogDirectoryIsNotMade(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(base, "state"))
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	missing := filepath.Join(base, "nonexist")
	log := filepath.Join(missing, "d.jsonl")
	in := `{"hook_event_name":"PreToolUse","cwd":"` + base + `","tool_name":"Read","tool_input":{"file_path":"x"},"tool_use_id":"t1"}`
	for _, tt := range []struct {
		stdin string
		args  []string
		code  int
	}{
		{"", []string{"run", "--backend", "none", "--audit", log, "--", "true"}, exitCordonError},
		{in, []string{"hook", "claude-code", "--workspace", base, "--audit", log}, exitHookBlock},
		{"", []string{"demo", "--audit", log}, exitCordonError},
	} {
		code, out, errs := runCLI(t, tt.stdin, tt.args...)
		require.Equal(t, tt.code, code, "%v: %s%s", tt.args, out, errs)
		require.Contains(t, errs, "directory "+missing+": file does not exist", tt.args)
		require.NoDirExists(t, missing, "%v made the directory of the log", tt.args)
	}
	code, _, errs := runCLI(t, in, "hook", "claude-code", "--workspace", base)
	require.Equal(t, exitOK, code, errs)
	def, err := audit.DefaultPath(hookLogName)
	require.NoError(t, err)
	require.FileExists(t, def)
}

// TestCLIHelpText: 'help CMD' is CMD's help and 'help' of no command a
// usage error; the help and the errors say what the commands do.
func TestCLIHelpText(t *testing.T) {
	help := func(args ...string) string {
		t.Helper()
		code, out, errs := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, "%v: %s", args, errs)
		return out
	}
	require.Equal(t, help("run", "--help"), help("help", "run"))
	require.Equal(t, help("audit", "verify", "--help"), help("help", "audit", "verify"))
	require.Equal(t, help("audit", "--help"), help("help", "audit"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "bogus"}, `cordon: help: unknown command "bogus": want run, `},
		{[]string{"help", "audit", "bogus"}, `cordon: help: unknown command "bogus": want verify, `},
		{[]string{"help", "run", "x"}, `cordon: help: unexpected argument "x"`},
	} {
		code, out, errs := runCLI(t, "", tt.args...)
		require.Equal(t, exitUsage, code, "%v", tt.args)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errs, tt.want), errs)
	}

	// The commands that refuse --backend none do not offer it.
	for _, c := range []string{"detect", "profile", "verify", "demo"} {
		code, _, errs := runCLI(t, "", c, "--backend", "jail")
		require.Equal(t, exitUsage, code)
		require.True(t, strings.HasPrefix(errs, "cordon "+c+": --backend \"jail\": want auto, bwrap, native, landlock or seatbelt\n"), errs)
	}

	hook := help("hook", "claude-code", "--help")
	_, ws, _ := strings.Cut(hook, "\n  --workspace DIR\n")
	ws, _, _ = strings.Cut(ws, "\n")
	require.Contains(t, ws, "relative paths are taken from the payload's cwd")
	require.Contains(t, help("run", "--help"), "on Linux cordon's own\n(native) where it is usable, else bubblewrap")
	require.Contains(t, help("verify", "--help"), "[--workers N] [--quiet]")
	require.NotContains(t, help("profile", "--help"), "see 'cordon profile'")
	for _, c := range []string{"run", "profile"} {
		out := help(c, "--help")
		require.NotContains(t, out, "\n  --network on\n", "on is a value, not a placeholder")
		require.Contains(t, out, "\n  --network on|off\n")
	}

	t.Setenv(state.EnvDir, t.TempDir())
	code, _, errs := runCLI(t, `{"hook_event_name":"Stop","cwd":"/"}`, "hook", "claude-code", "--no-audit")
	require.Equal(t, exitHookBlock, code)
	require.Contains(t, errs, `unsupported hook event "Stop": register 'cordon hook claude-code' for PreToolUse and PostToolUse`)
	require.NotContains(t, errs, "with --audit")
}

// TestCLIErrorsNameTheInput: each error names the input that was wrong,
// not another one (--workspace for $CLAUDE_PROJECT_DIR, the agent id's
// spelling for a missing --agent, permission for an empty command or a
// directory).
func TestCLIErrorsNameTheInput(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv(state.EnvDir, filepath.Join(base, "state"))
	in := `{"hook_event_name":"PreToolUse","cwd":"` + base + `","tool_name":"Read","tool_input":{"file_path":"x"},"tool_use_id":"t1"}`
	for _, tt := range []struct {
		name, project string
		args          []string
		code          int
		want          string
	}{
		{"relative CLAUDE_PROJECT_DIR", "relative", []string{"hook", "claude-code", "--no-audit"}, exitHookBlock,
			`cordon hook claude-code: CLAUDE_PROJECT_DIR "relative" is not an absolute path`},
		{"missing CLAUDE_PROJECT_DIR", base + "/nope", []string{"hook", "claude-code", "--no-audit"}, exitHookBlock,
			`cordon hook claude-code: CLAUDE_PROJECT_DIR "` + base + `/nope": `},
		{"agents root without agent", "", []string{"decide", "--workspace", base, "--agents-root", base}, exitCordonError,
			`cordon decide: --agents-root "` + base + `": an agent id (--agent ID) is required`},
		{"empty command", "", []string{"run", "--backend", "none", "--", ""}, exitUsage,
			"cordon run: the command is empty: name the program to run after --\nusage: "},
		{"directory", "", []string{"run", "--backend", "none", "--", base}, exitNotExec,
			"cordon run: " + base + ": cannot execute: is a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAUDE_PROJECT_DIR", tt.project)
			code, _, errs := runCLI(t, in, tt.args...)
			errs = withoutWithheld(errs)
			require.Equal(t, tt.code, code, errs)
			require.True(t, strings.HasPrefix(errs, tt.want), errs)
			require.NotContains(t, errs, "--workspace \"")
		})
	}
}

// withoutWithheld is a cordon run's stderr without the line naming the
// variables it withheld, which depends on the environment the test runs
// in (a CI runner's tokens).
func withoutWithheld(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "cordon run: withheld from the sandbox") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestCLICordonErrors: an input cordon cannot use (a file that does not
// exist, a directory that cannot be written) is a cordon error, 125, as
// the README's exit-code table says, never bad usage (2) or the "no"
// answer (1); the message names the command and the input.
func TestCLICordonErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"run", "--policy", missing, "--", "true"},
		{"run", "--workspace", missing, "--", "true"},
		{"profile", "--policy", missing},
		{"explain", "--policy", missing, "/x"},
		{"decide", "--workspace", missing},
		{"audit", "verify", missing},
		{"audit", "key", "export", filepath.Join(missing, "k")},
		{"doctor", "--dir", missing},
		{"verify", "--junit", filepath.Join(missing, "r.xml")},
		{"demo", "--audit", filepath.Join(missing, "a.jsonl")},
	} {
		code, _, errs := runCLI(t, "", args...)
		name := args[0]
		if name == "audit" {
			name = strings.Join(args[:2], " ")
			if args[1] == "key" {
				name = strings.Join(args[:3], " ")
			}
		}
		require.Equal(t, exitCordonError, code, "%v: %s", args, errs)
		require.True(t, strings.HasPrefix(errs, "cordon "+name+": "), "%v: %s", args, errs)
		require.Contains(t, errs, missing, "%v: the message names the input", args)
	}
}
