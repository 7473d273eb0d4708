package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// doctor runs 'cordon doctor --json' and returns its findings by check.
func doctor(t *testing.T, project string) (int, map[string]finding, []finding) {
	t.Helper()
	code, out, errs := runCLI(t, "", "doctor", "--json", "--dir", project)
	require.Contains(t, []int{exitOK, exitFail}, code, errs)
	var fs []finding
	require.NoError(t, json.Unmarshal([]byte(out), &fs), out)
	by := map[string]finding{}
	for _, f := range fs {
		require.Contains(t, []string{"ok", "warn", "fail"}, f.Status, f)
		require.NotEmpty(t, f.Detail, f)
		require.Equal(t, f.Status == "ok", f.Fix == "", "a finding has a fix exactly when it needs one: %+v", f)
		by[f.Check] = f
	}
	return code, by, fs
}

func TestDoctorFreshHome(t *testing.T) {
	_, project, _ := setupMachine(t)
	code, by, _ := doctor(t, project)
	require.Equal(t, exitOK, code, "warnings alone are notes, not a failure")
	require.Equal(t, "ok", by["backend"].Status)
	require.Equal(t, "ok", by["binary"].Status)
	require.Equal(t, "ok", by["path"].Status, "PATH holds the test's bin")
	require.Equal(t, "warn", by["hooks"].Status)
	require.Contains(t, by["hooks"].Fix, "cordon init AGENT")
	require.Equal(t, "ok", by["state"].Status)
	require.Contains(t, by["state"].Detail, "does not exist yet")
	require.Equal(t, "ok", by["audit"].Status)
	if _, err := exec.LookPath("git"); err == nil {
		require.Equal(t, "warn", by["git"].Status)
		require.Equal(t, "git config --global safe.bareRepository explicit", by["git"].Fix)
	}

	// The text form: one line per finding, its fix under it, a summary.
	code, out, _ := runCLI(t, "", "doctor", "--dir", project)
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "warn  hooks ")
	require.Contains(t, out, "fix: cordon init AGENT")
	require.Regexp(t, `\n\d of \d checks need fixing\n$`, out)
	require.NoDirExists(t, os.Getenv("CORDON_STATE_DIR"), "doctor creates nothing")

	// --strict: a warning counts.
	code, _, _ = runCLI(t, "", "doctor", "--strict", "--dir", project)
	require.Equal(t, exitFail, code)
}

func TestDoctorAfterInitAndWithStaleHook(t *testing.T) {
	home, project, exe := setupMachine(t)
	if git, err := exec.LookPath("git"); err == nil {
		require.NoError(t, exec.Command(git, "config", "--global", "safe.bareRepository", "explicit").Run())
	}
	code, _, errs := runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	code, _, errs = runCLI(t, "", "init", "gemini", "--user", "--dir", project)
	require.Equal(t, exitOK, code, errs)

	code, by, fs := doctor(t, project)
	require.Equal(t, exitOK, code, "%+v", fs)
	require.NotContains(t, by, "hooks")
	var hooks []finding
	for _, f := range fs {
		if strings.HasPrefix(f.Check, "hook ") {
			hooks = append(hooks, f)
		}
	}
	require.Equal(t, []finding{
		{"hook claude-code", "ok", filepath.Join(project, ".claude", "settings.json") + " (project) runs this cordon", ""},
		{"hook gemini", "ok", filepath.Join(home, ".gemini", "settings.json") + " (user) runs this cordon", ""},
	}, hooks)

	// The same settings, run by another cordon: the hooks are stale.
	other := filepath.Join(t.TempDir(), "cordon")
	require.NoError(t, os.WriteFile(other, nil, 0o755))
	useExecutable(t, other)
	code, by, _ = doctor(t, project)
	require.Equal(t, exitFail, code)
	f := by["hook claude-code"]
	require.Equal(t, "fail", f.Status)
	require.Contains(t, f.Detail, "the hook runs "+exe+", not this cordon ("+other+")")
	require.Equal(t, "cordon init claude-code", f.Fix)
	require.Equal(t, "cordon init gemini --user", by["hook gemini"].Fix)
	require.Equal(t, "warn", by["path"].Status, "the cordon on PATH is the other one")

	// A settings file doctor cannot parse is a finding with its name.
	path := filepath.Join(project, ".cursor", "hooks.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, by, _ = doctor(t, project)
	require.Equal(t, "fail", by["hook cursor"].Status)
	require.Contains(t, by["hook cursor"].Detail, path)
}

func TestDoctorStateDirMode(t *testing.T) {
	_, project, _ := setupMachine(t)
	d := os.Getenv("CORDON_STATE_DIR")
	require.NoError(t, os.Mkdir(d, 0o755))
	code, by, _ := doctor(t, project)
	require.Equal(t, exitFail, code)
	require.Equal(t, "fail", by["state"].Status)
	require.Contains(t, by["state"].Detail, "mode 0755")
	require.Equal(t, "chmod 700 "+d, by["state"].Fix)
	require.NoError(t, os.Chmod(d, 0o700))
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["state"].Status)
}

func TestDoctorBinaryInsideWorkspace(t *testing.T) {
	_, project, _ := setupMachine(t)
	inside := filepath.Join(project, "cordon")
	require.NoError(t, os.WriteFile(inside, nil, 0o755))
	useExecutable(t, inside)
	_, by, _ := doctor(t, project)
	require.Equal(t, "fail", by["binary"].Status)
	require.Contains(t, by["binary"].Detail, "inside the workspace "+project)
}

func TestDoctorHookTurnedOff(t *testing.T) {
	home, project, _ := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "codex", "--user", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	cfg := filepath.Join(home, ".codex", "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[features]\nhooks = false\n"), 0o600))
	_, by, _ := doctor(t, project)
	f := by["hook codex"]
	require.Equal(t, "fail", f.Status)
	require.Contains(t, f.Detail, cfg+" turns hooks off")
}

// An entry that runs cordon but gates nothing is no "ok": under another
// event, with a matcher no tool has, with words added after it.
func TestDoctorHookThatGatesNothing(t *testing.T) {
	_, project, exe := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	path := filepath.Join(project, ".claude", "settings.json")
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	_, by, _ := doctor(t, project)
	require.Equal(t, "ok", by["hook claude-code"].Status, by["hook claude-code"])

	const m = "Bash|Monitor|Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep|LS"
	for name, settings := range map[string]string{
		"other event":   `{"hooks":{"SessionEnd":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"` + exe + ` hook claude-code"}]}]}}`,
		"post only":     `{"hooks":{"PostToolUse":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"` + exe + ` hook claude-code"}]}]}}`,
		"matcher":       `{"hooks":{"PreToolUse":[{"matcher":"NoSuchTool","hooks":[{"type":"command","command":"` + exe + ` hook claude-code"}]}]}}`,
		"narrower":      `{"hooks":{"PreToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"` + exe + ` hook claude-code"}]}]}}`,
		"exit 0":        `{"hooks":{"PreToolUse":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"` + exe + ` hook claude-code --allow-sandboxed >/dev/null 2>&1; exit 0"}]}]}}`,
		"unknown flag":  `{"hooks":{"PreToolUse":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"` + exe + ` hook claude-code --no-such"}]}]}}`,
		"other agent":   `{"hooks":{"PreToolUse":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"` + exe + ` hook gemini"}]}]}}`,
		"relative":      `{"hooks":{"PreToolUse":[{"matcher":"` + m + `","hooks":[{"type":"command","command":"cordon hook claude-code"}]}]}}`,
		"not a command": `{"hooks":{"PreToolUse":[{"matcher":"` + m + `","hooks":[{"type":"prompt","command":"` + exe + ` hook claude-code"}]}]}}`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(settings), 0o644))
		_, by, _ := doctor(t, project)
		f := by["hook claude-code"]
		require.Equal(t, "fail", f.Status, "%s: %+v", name, f)
		require.Contains(t, f.Fix, "cordon init claude-code", name)
	}
	// A matcher left out covers every tool.
	require.NoError(t, os.WriteFile(path, []byte(`{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"`+exe+` hook claude-code --sandbox-bash"}]}]}}`), 0o644))
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["hook claude-code"].Status, by["hook claude-code"])
	require.NoError(t, os.WriteFile(path, good, 0o644))
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["hook claude-code"].Status, by["hook claude-code"])
}

// A layer the hook is not in switches hooks off for all: doctor looks at
// each, and init warns.
func TestDoctorHooksOffInAnotherLayer(t *testing.T) {
	home, project, _ := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	off := []byte(`{"disableAllHooks": true}`)
	for _, layer := range []string{filepath.Join(project, ".claude", "settings.local.json"), filepath.Join(home, ".claude", "settings.json")} {
		require.NoError(t, os.MkdirAll(filepath.Dir(layer), 0o755))
		require.NoError(t, os.WriteFile(layer, off, 0o644))
		_, by, _ := doctor(t, project)
		f := by["hook claude-code"]
		require.Equal(t, "fail", f.Status, "%s: %+v", layer, f)
		require.Contains(t, f.Detail, layer)
		code, _, errs := runCLI(t, "", "init", "claude-code", "--dir", project, "--allow-sandboxed")
		require.Equal(t, exitOK, code, errs)
		require.Contains(t, errs, layer+` sets "disableAllHooks": true`)
		require.NoError(t, os.Remove(layer))
	}

	code, _, errs = runCLI(t, "", "init", "codex", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	user := filepath.Join(home, ".codex", "config.toml")
	proj := filepath.Join(project, ".codex", "config.toml")
	_, by, _ := doctor(t, project)
	trust := codexTrust(t, filepath.Join(project, ".codex", "hooks.json"), by["hook codex"])
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o755))
	require.NoError(t, os.WriteFile(user, []byte(trust), 0o600))
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["hook codex"].Status, by["hook codex"])
	for _, layer := range []string{proj, user} {
		for _, toml := range []string{
			"features = { hooks = false }\n",
			"[\"features\"]\nhooks = false\n",
			"[features]\n'hooks' = false\n",
			"features . hooks = false\n",
			"[ features ]\n\"\\u0068ooks\" = false # off\n",
			"model = \"o3\"\n[features]\nhooks = false\n",
			"x = [\n 1,\n]\nfeatures = { web = true, hooks = false }\n",
			"x = \"\"\"\n[features]\n\"\"\"\nfeatures = [\n", // unreadable: no "ok"
		} {
			require.NoError(t, os.MkdirAll(filepath.Dir(layer), 0o755))
			require.NoError(t, os.WriteFile(layer, []byte(toml), 0o644))
			_, by, _ := doctor(t, project)
			f := by["hook codex"]
			require.Equal(t, "fail", f.Status, "%s %q: %+v", layer, toml, f)
			require.Contains(t, f.Detail, layer)
		}
		for _, toml := range []string{"[features]\nhooks = true\n[other]\nhooks = false\n", "other = { hooks = false }\n[a.features]\nhooks = false\n"} {
			require.NoError(t, os.WriteFile(layer, []byte(toml+trust), 0o644))
			_, by, _ := doctor(t, project)
			require.Equal(t, "ok", by["hook codex"].Status, "%q: %+v", toml, by["hook codex"])
		}
		require.NoError(t, os.Remove(layer))
		require.NoError(t, os.WriteFile(user, []byte(trust), 0o600))
	}
}

// codexTrust is the state Codex writes when the user trusts the first
// PreToolUse hook of the hooks.json at path, with the hash doctor's fix
// for the untrusted hook f names (TestDoctorCodexTrustAsCodexSeesIt holds
// that hash against Codex's own).
func codexTrust(t *testing.T, path string, f finding) string {
	t.Helper()
	m := regexp.MustCompile(`trusted_hash = "(sha256:[0-9a-f]{64})"`).FindStringSubmatch(f.Fix)
	require.NotNil(t, m, "%+v", f)
	return fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", path+":pre_tool_use:0:0", m[1])
}

// After 'cordon init codex --user', Codex runs no hook until the user
// trusts it (issue 38.7): doctor says so, and what to run, not "ok"; a
// trust decision makes it ok, and a state that disables the hook fails.
func TestDoctorCodexTrust(t *testing.T) {
	home, project, _ := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "codex", "--user", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	hooks := filepath.Join(home, ".codex", "hooks.json")
	cfg := filepath.Join(home, ".codex", "config.toml")
	_, by, _ := doctor(t, project)
	f := by["hook codex"]
	require.Equal(t, "fail", f.Status, f)
	require.Contains(t, f.Detail, "no trust decision")
	require.Contains(t, f.Detail, hooks+":pre_tool_use:0:0")
	require.Contains(t, f.Fix, "Trust all and continue")
	trust := codexTrust(t, hooks, f)

	require.NoError(t, os.WriteFile(cfg, []byte("model = \"o3\"\n"+trust), 0o600))
	_, by, _ = doctor(t, project)
	require.Equal(t, "ok", by["hook codex"].Status, by["hook codex"])

	// Trust given to another version of the hook is none.
	require.NoError(t, os.WriteFile(cfg, []byte(strings.Replace(trust, "sha256:", "sha256:0", 1)), 0o600))
	_, by, _ = doctor(t, project)
	require.Equal(t, "fail", by["hook codex"].Status)
	require.Contains(t, by["hook codex"].Detail, "modified")

	require.NoError(t, os.WriteFile(cfg, []byte(trust+"enabled = false\n"), 0o600))
	_, by, _ = doctor(t, project)
	require.Equal(t, "fail", by["hook codex"].Status)
	require.Contains(t, by["hook codex"].Detail, "enabled = false")
}

// --trust refuses, writing nothing to config.toml, what it cannot trust
// as Codex would: a config it cannot parse, a state the user set, a
// hooks.state the appended tables would not extend; and it is for codex
// alone.
func TestInitCodexTrustRefuses(t *testing.T) {
	home, project, _ := setupMachine(t)
	cfg := filepath.Join(home, ".codex", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o700))
	key := filepath.Join(home, ".codex", "hooks.json") + ":pre_tool_use:0:0"
	for src, why := range map[string]string{
		"model = \n": "cannot parse",
		fmt.Sprintf("[hooks.state.%q]\nenabled = false\n", key):                              "has a state for it already",
		fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = \"sha256:00\"\nenabled = true\n", key): "has a state for it already",
		"hooks = { state = {} }\n": "cannot extend",
	} {
		require.NoError(t, os.WriteFile(cfg, []byte(src), 0o600))
		code, _, errs := runCLI(t, "", "init", "codex", "--user", "--trust", "--dir", project)
		require.Equal(t, exitFail, code, "%q", src)
		require.Contains(t, errs, why, "%q", src)
		b, err := os.ReadFile(cfg)
		require.NoError(t, err)
		require.Equal(t, src, string(b))
	}
	code, _, _ := runCLI(t, "", "init", "claude-code", "--user", "--trust", "--dir", project)
	require.Equal(t, exitUsage, code)
}

// init run again with other flags changes cordon's hook, and so its
// hash: --trust moves the trust it wrote before to the new hook, and
// doctor says ok.
func TestInitCodexTrustAgain(t *testing.T) {
	home, project, _ := setupMachine(t)
	code, _, errs := runCLI(t, "", "init", "codex", "--user", "--trust", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	code, _, errs = runCLI(t, "", "init", "codex", "--user", "--trust", "--allow-sandboxed", "--dir", project)
	require.Equal(t, exitOK, code, errs)
	b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "trusted_hash"), "%s", b)
	_, by, _ := doctor(t, project)
	require.Equal(t, "ok", by["hook codex"].Status, by["hook codex"])
}
