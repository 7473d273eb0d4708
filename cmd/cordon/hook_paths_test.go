package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// homeHookFixture: Claude Code started in ~, so HOME is the workspace and
// holds a key (~/.ssh) and cordon's state directory with its audit key
// (~/.local/state/cordon, made by the hook's own audit log); base/outside
// holds a secret.
func homeHookFixture(t *testing.T) (home, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home, outside = filepath.Join(base, "home"), filepath.Join(base, "outside")
	for _, d := range []string{home + "/src", home + "/.ssh", outside} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(home+"/src/main.go", []byte("package main\n"), 0o644))
	require.NoError(t, os.WriteFile(home+"/.ssh/id_ed25519", []byte("KEY"), 0o600))
	require.NoError(t, os.WriteFile(outside+"/secret.txt", []byte("s"), 0o600))
	t.Setenv("HOME", home)
	t.Setenv(state.EnvDir, home+"/.local/state/cordon")
	t.Setenv("CLAUDE_PROJECT_DIR", home)
	// The first call makes the audit log and its key under HOME.
	code, _, errs := runCLI(t, payload(home, "Read", map[string]any{"file_path": home + "/src/main.go"}), "hook", "claude-code")
	require.Equal(t, exitOK, code, errs)
	_, err = os.Stat(home + "/.local/state/cordon/audit")
	require.NoError(t, err, "the hook's audit log is not where this test expects cordon's state")
	return home, outside
}

// Each file tool of Claude Code, given each spelling, is decided on the
// path Claude Code opens: the string trimmed as JavaScript's trim does
// (cordon refuses what trimming would change), "~" and "~/" expanded to
// HOME, a relative path taken from the payload's cwd. A row's decision
// holds for every tool, the answer for a write where it differs; want is
// a piece of the reason naming the path decided.
func TestHookPathSpellings(t *testing.T) {
	home, outside := homeHookFixture(t)
	const (
		allow, ask, deny = "allow", "ask", "deny"
		readAllow        = "path.read_allow"
		writeAsk         = "path.write_requires_approval"
		outsideWS        = "path.outside_workspace"
		denied           = "policy.denied"
		invalid          = "request.invalid_arguments"
	)
	key := home + "/.ssh"
	audit := ".local/state/cordon/audit"
	rows := []struct {
		name, spelling string
		read, write    string // rule ids; write "" is read's
		want           string // in the reason: the path decided, or what is refused
	}{
		{"relative inside", "src/main.go", readAllow, writeAsk, `"src/main.go" is inside`},
		{"absolute inside", home + "/src/main.go", readAllow, writeAsk, home + "/src/main.go"},
		{"absolute outside", outside + "/secret.txt", outsideWS, "", "outside the workspace"},
		{"absolute denied", key, denied, "", key},
		{"leading space", " " + key, invalid, "", `begins or ends with U+0020, which Claude Code trims before it opens the path (it would open "` + key + `")`},
		{"leading tab", "\t" + key, invalid, "", "U+0009"},
		{"leading newline", "\n" + key, invalid, "", "U+000A"},
		{"leading no-break space", "\u00a0" + key, invalid, "", "U+00A0"},
		{"leading line separator", "\u2028" + key, invalid, "", "U+2028"},
		{"leading byte-order mark", "\ufeff" + key, invalid, "", "U+FEFF"},
		{"leading ideographic space", "\u3000" + key, invalid, "", "U+3000"},
		{"trailing space", key + " ", invalid, "", "U+0020"},
		{"trailing ideographic space", "src/main.go\u3000", invalid, "", "U+3000"},
		{"edge next line (not trimmed by JavaScript, refused all the same)", "\u0085src", invalid, "", "U+0085"},
		{"tilde", "~/.ssh", denied, "", key},
		{"tilde inside", "~/src/main.go", readAllow, writeAsk, home + "/src/main.go"},
		{"blank then tilde", " ~/.ssh", invalid, "", `(it would open "~/.ssh")`},
		{"tilde user", "~root/.ssh", outsideWS, "", `"~" is not expanded`},
		{"escape sequence", "src/\x1b[2Kmain.go", invalid, "", "U+001B"},
		{"carriage return", "src/main.go\r" + key, invalid, "", "U+000D"},
		{"NUL", "src/main.go\x00", invalid, "", "U+0000"},
		{"text direction override", "src/\u202eog.niam", invalid, "", "U+202E"},
		{"dotdot climbs out", "src/../../outside/secret.txt", outsideWS, "", "outside the workspace"},
		{"dotdot into the key", "src/../.ssh", denied, "", key},
		{"audit key, relative", audit, denied, "", home + "/.local/state/cordon"},
		{"audit key, leading blank", " " + audit, invalid, "", `(it would open "` + audit + `")`},
		{"audit key, tilde", "~/" + audit, denied, "", home + "/.local/state/cordon"},
	}
	// Claude Code's file tools and the field that names the path, with
	// the rest of an input of the shape its schema gives.
	type fileTool struct {
		name, field string
		write       bool
		rest        map[string]any
	}
	fileTools := []fileTool{
		{"Read", "file_path", false, nil},
		{"Write", "file_path", true, map[string]any{"content": "x"}},
		{"Edit", "file_path", true, map[string]any{"old_string": "a", "new_string": "b"}},
		{"MultiEdit", "file_path", true, map[string]any{"edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}},
		{"NotebookEdit", "notebook_path", true, map[string]any{"new_source": "x", "cell_id": "c1"}},
		{"Glob", "path", false, map[string]any{"pattern": "*.go"}},
		{"Grep", "path", false, map[string]any{"pattern": "KEY", "output_mode": "content"}},
		{"LS", "path", false, nil},
	}
	for _, ft := range fileTools {
		for _, r := range rows {
			t.Run(ft.name+"/"+r.name, func(t *testing.T) {
				input := map[string]any{ft.field: r.spelling}
				for k, v := range ft.rest {
					input[k] = v
				}
				rule := r.read
				if ft.write && r.write != "" {
					rule = r.write
				}
				decision := deny
				switch rule {
				case readAllow:
					decision = allow
				case writeAsk:
					decision = ask
				}
				code, out, errs := runCLI(t, payload(home, ft.name, input), "hook", "claude-code")
				require.Equal(t, exitOK, code, errs)
				a := decodeAnswer(t, out).HookSpecificOutput
				require.Equal(t, decision, a.PermissionDecision, "%q: %s", r.spelling, a.PermissionDecisionReason)
				require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon "+rule+": "), "%q: %s", r.spelling, a.PermissionDecisionReason)
				require.Contains(t, a.PermissionDecisionReason, r.want)
			})
		}
	}
}

// The attack as it was: Grep or Glob given a path with a leading blank,
// which cordon read as a name inside the workspace and Claude Code trims
// to the key, or to cordon's audit key. Each was allowed.
func TestHookLeadingBlankPathIsNotAllowed(t *testing.T) {
	home, outside := homeHookFixture(t)
	for _, c := range []struct{ tool, path string }{
		{"Grep", " " + home + "/.ssh"},
		{"Grep", " " + outside},
		{"Glob", " ~/.ssh"},
		{"Grep", " .local/state/cordon/audit"},
		{"Glob", "\u3000" + home + "/.ssh"},
	} {
		in := map[string]any{"path": c.path, "pattern": "*"}
		code, out, errs := runCLI(t, payload(home, c.tool, in), "hook", "claude-code")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		require.Equal(t, "deny", a.PermissionDecision, "%s %q: %s", c.tool, c.path, a.PermissionDecisionReason)
	}
}

// Glob's pattern is not trimmed: an absolute one replaces the path, and
// one without a wildcard is matched by ripgrep among everything below the
// directory above it, so that directory is what is decided.
func TestHookGlobPatterns(t *testing.T) {
	home, _ := homeHookFixture(t)
	for _, c := range []struct {
		input    map[string]any
		decision string
		rule     string
	}{
		{map[string]any{"pattern": "id_ed25519"}, "deny", "policy.denied"},                            // ripgrep lists ~/.ssh/id_ed25519
		{map[string]any{"pattern": home + "/id_ed25519"}, "deny", "policy.denied"},                    // the same, absolute
		{map[string]any{"pattern": home + "/.ssh/*", "path": home + "/src"}, "deny", "policy.denied"}, // the pattern's directory, not path
		{map[string]any{"pattern": "src/main.go"}, "allow", "path.read_allow"},
		{map[string]any{"pattern": "*.go", "path": "src"}, "allow", "path.read_allow"},
		{map[string]any{"pattern": "*.go", "path": "~/src"}, "allow", "path.read_allow"},
		{map[string]any{"pattern": "src/\x1b]0;x\x07*.go"}, "deny", "request.invalid_arguments"},
	} {
		code, out, errs := runCLI(t, payload(home, "Glob", c.input), "hook", "claude-code")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		require.Equal(t, c.decision, a.PermissionDecision, "%v: %s", c.input, a.PermissionDecisionReason)
		require.True(t, strings.HasPrefix(a.PermissionDecisionReason, "cordon "+c.rule+": "), "%v: %s", c.input, a.PermissionDecisionReason)
	}
}

// Monitor runs a shell command outside the Bash matcher; cordon decides
// it as Bash and, with --sandbox-bash, runs it inside the sandbox.
func TestHookMonitorIsBash(t *testing.T) {
	home, _ := homeHookFixture(t)
	in := map[string]any{"command": "tail -f build.log", "description": "build log", "timeout_ms": 300000, "persistent": false}
	code, out, errs := runCLI(t, payload(home, "Monitor", in), "hook", "claude-code", "--sandbox-bash")
	require.Equal(t, exitOK, code, errs)
	a := decodeAnswer(t, out).HookSpecificOutput
	require.Equal(t, "ask", a.PermissionDecision, a.PermissionDecisionReason)
	require.Contains(t, a.UpdatedInput["command"], " run --no-tty --workspace '"+home+"' -- ")
	require.Equal(t, "build log", a.UpdatedInput["description"])
	for _, in := range []map[string]any{
		{"command": "sudo tail -f /var/log/auth.log", "description": "x", "timeout_ms": 1000, "persistent": false},
		{"ws": map[string]any{"url": "wss://example.com"}, "description": "x", "timeout_ms": 1000, "persistent": false},
	} {
		code, out, errs := runCLI(t, payload(home, "Monitor", in), "hook", "claude-code", "--sandbox-bash")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		require.Equal(t, "deny", a.PermissionDecision, "%v: %s", in, a.PermissionDecisionReason)
		require.Nil(t, a.UpdatedInput)
	}
}

// claudeOpens is the path Claude Code opens for a path argument, written
// from its documented behaviour (docs/claude-code.md) rather than from
// cordon's code: trimmed as JavaScript trims, "~" and "~/" are home, a
// relative path is resolved against cwd and cleaned, as Node does.
func claudeOpens(p, home, cwd string) string {
	p = strings.TrimFunc(p, func(r rune) bool {
		switch r {
		case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
			return true
		}
		return r >= 0x2000 && r <= 0x200A
	})
	switch {
	case p == "":
		return cwd
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// claudeGets is what Claude Code hands the model for an allowed call:
// Read's file, or every file (its name and contents) that a ripgrep walk
// from Grep's or Glob's root reaches and the filter matches.
func claudeGets(t *testing.T, tool string, input map[string]any, home, cwd string) string {
	t.Helper()
	str := func(k string) string { s, _ := input[k].(string); return s }
	var root, filter string
	switch tool {
	case "Read":
		b, _ := os.ReadFile(claudeOpens(str("file_path"), home, cwd))
		return string(b)
	case "Grep":
		root = cwd
		if str("path") != "" {
			root = claudeOpens(str("path"), home, cwd)
		}
	case "Glob":
		root, filter = cwd, str("pattern")
		if str("path") != "" {
			root = claudeOpens(str("path"), home, cwd)
		}
		if filepath.IsAbs(filter) {
			i := strings.IndexAny(filter, "*?[{")
			if i < 0 {
				root, filter = filepath.Dir(filter), filepath.Base(filter)
			} else if j := strings.LastIndex(filter[:i], "/"); j >= 0 {
				root, filter = filter[:max(j, 1)], filter[j+1:]
			}
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // ripgrep follows the root it is given, not the links below it
	}
	var got strings.Builder
	_ = filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if filter != "" {
			name := rel
			if !strings.Contains(filter, "/") {
				name = filepath.Base(rel) // ripgrep: a glob without a slash matches at any depth
			}
			if ok, _ := filepath.Match(filter, name); !ok {
				return nil
			}
			got.WriteString(p + "\n") // Glob returns names
			return nil
		}
		b, _ := os.ReadFile(p)
		got.WriteString(p + "\n" + string(b))
		return nil
	})
	return got.String()
}

// Judged by what Claude Code would hand the model: for every spelling of
// every path to the key or to cordon's audit key that cordon allows,
// Claude Code opening it as it does gets neither key (nor, from Glob, the
// key's name).
func TestHookAllowedSpellingsNeverReachAKey(t *testing.T) {
	home, _ := homeHookFixture(t)
	auditKey, err := os.ReadFile(home + "/.local/state/cordon/audit/key")
	require.NoError(t, err)
	secrets := []string{"KEY", string(auditKey), "id_ed25519", "/audit/key"}
	blanks := []string{"", " ", "\t", "\u00a0", "\ufeff", "\u3000"}
	paths := []string{home + "/.ssh", "~/.ssh", ".ssh", ".local/state/cordon/audit", "src/../.ssh", home, "~", ".", "src"}
	var inputs []struct {
		tool  string
		input map[string]any
	}
	add := func(tool string, input map[string]any) {
		inputs = append(inputs, struct {
			tool  string
			input map[string]any
		}{tool, input})
	}
	for _, b := range blanks {
		for _, p := range paths {
			for _, s := range []string{b + p, p + b} {
				add("Read", map[string]any{"file_path": s + "/id_ed25519"})
				add("Read", map[string]any{"file_path": s + "/key"})
				add("Grep", map[string]any{"pattern": ".", "path": s})
				add("Glob", map[string]any{"pattern": "*", "path": s})
				add("Glob", map[string]any{"pattern": "id_ed25519", "path": s})
				add("Glob", map[string]any{"pattern": "key", "path": s})
			}
		}
	}
	for _, pat := range []string{"id_ed25519", "key", "*", home + "/id_ed25519", home + "/.ssh/*", home + "/key"} {
		add("Glob", map[string]any{"pattern": pat})
	}
	allowed := 0
	for _, c := range inputs {
		code, out, errs := runCLI(t, payload(home, c.tool, c.input), "hook", "claude-code", "--no-audit")
		require.Equal(t, exitOK, code, errs)
		a := decodeAnswer(t, out).HookSpecificOutput
		if a.PermissionDecision != "allow" {
			continue
		}
		allowed++
		got := claudeGets(t, c.tool, c.input, home, home)
		for _, s := range secrets {
			require.NotContains(t, got, s, "%s %q allowed (%s), and Claude Code hands the model a key", c.tool, c.input, a.PermissionDecisionReason)
		}
	}
	require.Positive(t, allowed, "nothing was allowed: the test checks nothing")
	t.Logf("%d calls, %d allowed, none of them reaching a key", len(inputs), allowed)
}
