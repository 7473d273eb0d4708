package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/detect"
)

// setupMachine gives a test a fresh HOME, state directory and project,
// and a cordon binary (a stand-in file) outside all of them, which
// init and doctor take for the running one.
func setupMachine(t *testing.T) (home, project, exe string) {
	root := t.TempDir()
	home, project = filepath.Join(root, "home"), filepath.Join(root, "proj")
	bin := filepath.Join(root, "bin")
	for _, d := range []string{home, project, bin} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	exe = filepath.Join(bin, "cordon")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("COPILOT_HOME", "")
	t.Setenv("PATH", bin)
	t.Setenv("CORDON_STATE_DIR", filepath.Join(root, "state"))
	// Doctor's git check must not read the machine's global config.
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	useExecutable(t, exe)
	old := detectBackend
	detectBackend = func(context.Context) detect.Result {
		return detect.Result{Backend: "native", Usable: true, Reason: "ok (test)"}
	}
	t.Cleanup(func() { detectBackend = old })
	return home, project, exe
}

func useExecutable(t *testing.T, exe string) {
	old := executable
	executable = func() (string, error) { return exe, nil }
	t.Cleanup(func() { executable = old })
}

func TestInitEmptyProjectThenAgainThenRemove(t *testing.T) {
	_, project, exe := setupMachine(t)
	path := filepath.Join(project, ".claude", "settings.json")

	code, out, errs := runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.Contains(t, out, "wrote "+path+": Claude Code runs '"+exe+" hook claude-code --sandbox-bash'")
	require.Contains(t, out, "--allow-sandboxed", "init proposes it")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command string }
		}
	}
	require.NoError(t, json.Unmarshal(b, &s))
	require.Equal(t, exe+" hook claude-code --sandbox-bash", s.Hooks["PreToolUse"][0].Hooks[0].Command)
	require.Equal(t, exe+" hook claude-code --sandbox-bash", s.Hooks["PostToolUse"][0].Hooks[0].Command)

	code, out, errs = runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, path+": Claude Code's hook is already set up; nothing changed\n", out)
	b2, _ := os.ReadFile(path)
	require.Equal(t, b, b2)

	code, out, errs = runCLI(t, "", "init", "--remove", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, "took cordon's hook out of "+path+"\n", out)
	b, _ = os.ReadFile(path)
	require.Equal(t, "{}\n", string(b))
}

const userSettings = `{
  // hooks of my own
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "~/bin/audit-bash" } ] }
    ]
  },
  "permissions": { "allow": ["Bash(ls:*)"] } /* trailing */
}
`

func TestInitUserSettingsKeepsEverythingAndRemoveRestores(t *testing.T) {
	home, project, exe := setupMachine(t)
	path := filepath.Join(home, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(userSettings), 0o600))

	code, out, errs := runCLI(t, "", "init", "claude-code", "--user", "--allow-sandboxed", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	require.NotContains(t, out, "For fewer prompts")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	got := string(b)
	require.True(t, strings.HasPrefix(got, userSettings[:strings.Index(userSettings, "\n    ]")]), got)
	require.True(t, strings.HasSuffix(got, "  },\n  \"permissions\": { \"allow\": [\"Bash(ls:*)\"] } /* trailing */\n}\n"), got)
	require.Contains(t, got, `"command": "`+exe+` hook claude-code --sandbox-bash --allow-sandboxed"`)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	code, _, errs = runCLI(t, "", "init", "--remove", "claude-code", "--user", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	b, _ = os.ReadFile(path)
	require.Equal(t, userSettings, string(b))

	code, out, _ = runCLI(t, "", "init", "--remove", "claude-code", "--user", "--dir", project)
	require.Equal(t, exitOK, code)
	require.Equal(t, path+": no cordon entry; nothing to remove\n", out)
}

func TestInitRefusesUnparsableFile(t *testing.T) {
	_, project, _ := setupMachine(t)
	path := filepath.Join(project, ".gemini", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	bad := "{\"hooks\": {\"BeforeTool\": [}\n"
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
	for _, args := range [][]string{{"init", "gemini"}, {"init", "--remove", "gemini"}, {"init", "gemini", "--dry-run"}} {
		code, out, errs := runCLI(t, "", append(args, "--dir", project)...)
		require.Equal(t, exitFail, code, errs)
		require.Empty(t, out)
		require.Contains(t, errs, "cordon init: "+path+": cannot parse it (line 1: ")
		require.Contains(t, errs, "cordon leaves it untouched")
		b, _ := os.ReadFile(path)
		require.Equal(t, bad, string(b))
	}
}

func TestInitDryRunWritesNothing(t *testing.T) {
	home, project, exe := setupMachine(t)
	code, out, errs := runCLI(t, "", "init", "codex", "--user", "--dry-run", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	path := filepath.Join(home, ".codex", "hooks.json")
	require.True(t, strings.HasPrefix(out, "--- /dev/null\n+++ "+path+"\n@@ -0,0 +1,"), out)
	require.Contains(t, out, `+            "command": "`+exe+` hook codex --sandbox-bash"`)
	require.True(t, strings.HasSuffix(out, "(--dry-run: nothing written)\n"))
	require.NoDirExists(t, filepath.Join(home, ".codex"))

	// CODEX_HOME moves Codex's user settings, and init follows.
	t.Setenv("CODEX_HOME", filepath.Join(home, "cx"))
	code, out, _ = runCLI(t, "", "init", "codex", "--user", "--dry-run", "--dir", project)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "+++ "+filepath.Join(home, "cx", "hooks.json")+"\n")
}

func TestInitRefusesCordonInsideTheWorkspace(t *testing.T) {
	_, project, _ := setupMachine(t)
	inside := filepath.Join(project, "tools", "cordon")
	require.NoError(t, os.MkdirAll(filepath.Dir(inside), 0o755))
	require.NoError(t, os.WriteFile(inside, nil, 0o755))
	useExecutable(t, inside)
	for _, scope := range []string{"--project", "--user"} {
		code, out, errs := runCLI(t, "", "init", "cursor", scope, "--dir", project)
		require.Equal(t, exitFail, code, errs)
		require.Empty(t, out)
		require.Contains(t, errs, "cordon init: refusing to install "+inside+": it is inside the workspace "+project)
	}
	require.NoDirExists(t, filepath.Join(project, ".cursor"))

	// From a subdirectory of the project's work tree, the tree counts.
	require.NoError(t, os.Mkdir(filepath.Join(project, ".git"), 0o755))
	sub := filepath.Join(project, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	code, _, errs := runCLI(t, "", "init", "cursor", "--dir", sub)
	require.Equal(t, exitFail, code)
	require.Contains(t, errs, "refusing to install "+inside+": it is inside the workspace "+project)

	// A symlink from outside to a cordon inside is followed to where it is.
	link := filepath.Join(t.TempDir(), "cordon")
	require.NoError(t, os.Symlink(inside, link))
	useExecutable(t, link)
	code, _, errs = runCLI(t, "", "init", "cursor", "--dir", project)
	require.Equal(t, exitFail, code)
	require.Contains(t, errs, "refusing to install "+inside)
}

func TestInitUnknownAgent(t *testing.T) {
	setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "aider")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, `cordon init: unknown agent "aider": want claude-code, codex, copilot, cursor, gemini`)
	code, _, errs = runCLI(t, "", "init", "codex", "--audit", "/nonexistent/dir/log.jsonl")
	require.Equal(t, exitFail, code)
	require.Contains(t, errs, "its directory does not exist (mkdir -p /nonexistent/dir)")
	code, _, errs = runCLI(t, "", "init", "codex", "--user", "--project")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, "contradict")
}

func TestInitRefusesAProjectLinkLeadingOut(t *testing.T) {
	home, project, _ := setupMachine(t)
	elsewhere := filepath.Join(home, "other.json")
	require.NoError(t, os.WriteFile(elsewhere, []byte("{}\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(project, ".claude"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(project, ".claude", "settings.json")))
	code, _, errs := runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitFail, code, errs)
	require.Contains(t, errs, "leads to "+elsewhere+", outside the project")
	b, _ := os.ReadFile(elsewhere)
	require.Equal(t, "{}\n", string(b))

	// A linked directory, the file not there yet: the same.
	outDir := t.TempDir()
	require.NoError(t, os.Symlink(outDir, filepath.Join(project, ".cursor")))
	code, _, errs = runCLI(t, "", "init", "cursor", "--dir", project)
	require.Equal(t, exitFail, code, errs)
	require.Contains(t, errs, "outside the project")
	require.NoFileExists(t, filepath.Join(outDir, "hooks.json"))

	// --remove through a link must not take cordon's entry out of a file
	// elsewhere (the user's own settings).
	code, _, errs = runCLI(t, "", "init", "--remove", "claude-code", "--dir", project)
	require.Equal(t, exitFail, code, errs)
	require.Contains(t, errs, "outside the project")
}

// TestInitJSON: --json says what init did (or would do), one object per
// run, with the same exit status.
func TestInitJSON(t *testing.T) {
	_, project, exe := setupMachine(t)
	path := filepath.Join(project, ".codex", "hooks.json")
	for _, step := range []struct {
		args   []string
		action string
		remove bool
	}{
		{[]string{"--dry-run"}, "dry-run", false},
		{nil, "written", false},
		{nil, "unchanged", false},
		{[]string{"--remove"}, "written", true}, // cordon's entry out, "{}" kept
	} {
		code, out, errs := runCLI(t, "", append([]string{"init", "codex", "--json", "--dir", project}, step.args...)...)
		require.Equal(t, exitOK, code, errs)
		var v initJSON
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.Equal(t, initJSON{Agent: "codex", Path: path, Scope: "project", Action: step.action, Remove: step.remove,
			Command: map[bool]string{false: exe + " hook codex --sandbox-bash"}[step.remove], Diff: v.Diff}, v)
		require.Equal(t, step.action == "dry-run", v.Diff != "", "a diff exactly for --dry-run")
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(b))
}
