package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// homeFixture is Claude Code started in ~: the workspace is HOME, with a
// key in .ssh, a shell rc file, a git repository and a link to the keys.
// HOME is set for the test, so the decider's default launched policy (the
// workspace preset) sees it.
func homeFixture(t *testing.T) (home string, d *Decider) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home = filepath.Join(base, "home")
	for _, dir := range []string{home + "/.ssh", home + "/.aws", home + "/src", home + "/.git/hooks", home + "/agents/me", home + "/agents/other"} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	for name, data := range map[string]string{
		".ssh/id_ed25519": "KEY", ".aws/credentials": "AWS", ".bashrc": "alias", "src/main.go": "package main\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(home, name), []byte(data), 0o600))
	}
	require.NoError(t, os.Symlink(".ssh", home+"/keys"))
	require.NoError(t, os.WriteFile(home+"/.git/config", []byte("[core]\n"), 0o644))
	require.NoError(t, os.Link(home+"/.git/config", home+"/src/cfg"))
	require.NoError(t, os.Symlink(filepath.Dir(home), home+"/up"))
	t.Setenv("HOME", home)
	d, err = New(Config{Workspace: home})
	require.NoError(t, err)
	return home, d
}

// TestRuleIDs pins every rule id, its action and when it fires. A rule
// added without a case here fails the test.
func TestRuleIDs(t *testing.T) {
	home, d := homeFixture(t)
	agents, err := New(Config{Workspace: home + "/agents/me", AgentsRoot: home + "/agents", Agent: "me"})
	require.NoError(t, err)
	sandboxed, err := New(Config{Workspace: home, ShellSandboxed: true})
	require.NoError(t, err)
	tests := []struct {
		rule   string
		action Action
		when   string
		d      *Decider
		req    Request
	}{
		{RuleCrossAgent, Deny, "another agent's directory", agents, req("read_file", map[string]string{"path": "../other/notes"})},
		{RuleCrossAgent, Deny, "a recursive tool above the agents root", agents, req("Grep", map[string]string{"pattern": "x", "path": home})},
		{RuleInvalidArguments, Deny, "path not a string", d, req("Read", `{"file_path":1}`)},
		{RuleInvalidArguments, Deny, "empty command", d, req("Bash", map[string]string{"command": ""})},
		{RuleOutsideWorkspace, Deny, "read outside", d, req("Read", map[string]string{"file_path": "/etc/hostname"})},
		{RuleOutsideWorkspace, Deny, "write outside", d, req("Write", map[string]string{"file_path": "/etc/hosts", "content": "x"})},
		{RuleOutsideWorkspace, Deny, "write through a link that leaves", d, req("write_file", map[string]string{"path": "up/new.txt", "content": "x"})},
		{RuleOutsideWorkspace, Deny, "edit through ..", d, req("Edit", map[string]string{"file_path": home + "/src/../../x"})},
		{RuleOutsideWorkspace, Deny, "glob prefix outside", d, req("Glob", map[string]string{"pattern": "../*"})},
		{RuleOutsideWorkspace, Deny, "unresolvable (~ is not expanded)", d, req("read_file", map[string]string{"path": "~/x"})},
		{RuleProtectedPath, Deny, "git hook", d, req("Write", map[string]string{"file_path": home + "/.git/hooks/pre-commit", "content": "x"})},
		{RuleProtectedPath, Deny, "git config", d, req("edit_file", map[string]string{"path": ".git/config"})},
		{RuleProtectedPath, Deny, "shell rc file in a HOME workspace", d, req("Edit", map[string]string{"file_path": home + "/.bashrc"})},
		{RuleProtectedPath, Deny, "a file with another hard link (here to .git/config)", d, req("Edit", map[string]string{"file_path": home + "/src/cfg"})},
		{RulePolicyDenied, Deny, "read of a credential store in a HOME workspace", d, req("Read", map[string]string{"file_path": home + "/.ssh/id_ed25519"})},
		{RulePolicyDenied, Deny, "read through a link into it", d, req("read_file", map[string]string{"path": "keys/id_ed25519"})},
		{RulePolicyDenied, Deny, "write into it", d, req("Write", map[string]string{"file_path": home + "/.ssh/authorized_keys", "content": "x"})},
		{RulePolicyDenied, Deny, "grep of it", d, req("Grep", map[string]string{"pattern": "KEY", "path": home + "/.ssh"})},
		{RulePolicyDenied, Deny, "list of it", d, req("LS", map[string]string{"path": home + "/.aws"})},
		{RulePolicyDenied, Deny, "glob into it", d, req("Glob", map[string]string{"pattern": ".ssh/*"})},
		{RulePolicyDenied, Deny, "grep of a tree holding it", d, req("Grep", map[string]string{"pattern": "KEY"})},
		{RuleHardDeny, Deny, "sudo", d, req("Bash", map[string]string{"command": "sudo id"})},
		{RuleHardDeny, Deny, "unparsable", d, req("bash", map[string]string{"command": "echo 'x"})},
		{RuleReadAllow, Allow, "read inside", d, req("Read", map[string]string{"file_path": home + "/src/main.go"})},
		{RuleReadAllow, Allow, "read of a protected file", d, req("read_file", map[string]string{"path": ".bashrc"})},
		{RuleReadAllow, Allow, "grep of a tree without denied roots", d, req("Grep", map[string]string{"pattern": "x", "path": home + "/src"})},
		{RuleWriteApproval, Ask, "write inside", d, req("Write", map[string]string{"file_path": home + "/src/new.go", "content": "x"})},
		{RuleBashApproval, Ask, "other commands", d, req("Bash", map[string]string{"command": "cat ~/.ssh/id_ed25519"})},
		{RuleBashSandboxed, Allow, "a command run inside the sandbox", sandboxed, req("Bash", map[string]string{"command": "make test"})},
		{RuleHardDeny, Deny, "sudo, sandboxed or not", sandboxed, req("Bash", map[string]string{"command": "sudo id"})},
		{RuleProtectedPath, Deny, "a write to a git hook, sandboxed or not", sandboxed, req("Write", map[string]string{"file_path": home + "/.git/hooks/pre-commit", "content": "x"})},
		{RuleDefaultDeny, Deny, "unknown tool", d, req("WebFetch", map[string]string{"url": "x"})},
		{RuleDefaultDeny, Deny, "MCP tool", d, req("mcp__x__y", map[string]string{})},
	}
	pinned := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.when, func(t *testing.T) {
			got := tt.d.Decide(tt.req)
			require.Equal(t, []string{string(tt.action), tt.rule}, []string{string(got.Action), got.RuleID}, got.Reason)
			require.NotEmpty(t, got.Reason)
		})
		pinned[tt.rule] = true
	}
	for _, id := range Rules() {
		require.True(t, pinned[id], "rule %s has no case in TestRuleIDs", id)
	}
}

// Claude Code started in ~: every read tool aimed at a key is refused with
// the rule and the denied root named, as the sandbox would refuse it.
func TestHomeWorkspaceKeysAreDenied(t *testing.T) {
	home, d := homeFixture(t)
	for _, r := range []Request{
		req("Read", map[string]string{"file_path": home + "/.ssh/id_ed25519"}),
		req("Grep", map[string]string{"pattern": "KEY", "path": home + "/.ssh/id_ed25519"}),
		req("LS", map[string]string{"path": home + "/.ssh"}),
		req("Glob", map[string]string{"pattern": "**/id_*", "path": home}),
		req("Read", map[string]string{"file_path": home + "/src/../.ssh/id_ed25519"}),
	} {
		got := d.Decide(r)
		require.Equal(t, Deny, got.Action, "%s %s: %s", r.Name, r.Arguments, got.Reason)
		require.Equal(t, RulePolicyDenied, got.RuleID, got.Reason)
		require.Contains(t, got.Reason, home+"/.ssh")
	}
}

// Relative paths are taken from Config.Cwd, which is where Claude Code's
// tools take them from; the scope stays the workspace.
func TestCwdIsTheBaseOfRelativePaths(t *testing.T) {
	home, _ := homeFixture(t)
	d, err := New(Config{Workspace: home + "/src", Cwd: home})
	require.NoError(t, err)
	got := d.Decide(req("read_file", map[string]string{"path": "src/main.go"}))
	require.Equal(t, RuleReadAllow, got.RuleID, got.Reason)
	got = d.Decide(req("Grep", map[string]string{"pattern": "x"})) // Grep's default path is the cwd, outside src
	require.Equal(t, RuleOutsideWorkspace, got.RuleID, got.Reason)
	d, err = New(Config{Workspace: home, Cwd: home + "/.git"})
	require.NoError(t, err)
	got = d.Decide(req("write_file", map[string]string{"path": "hooks/post-checkout"}))
	require.Equal(t, RuleProtectedPath, got.RuleID, got.Reason)
	// Claude Code expands "~" and "~/" to HOME (here the workspace), and
	// reads "~root/x" as a name in the cwd, which cordon refuses.
	for p, rule := range map[string]string{"~/.ssh/id_ed25519": RulePolicyDenied, "~/src/main.go": RuleReadAllow, "~root/x": RuleOutsideWorkspace} {
		got = d.Decide(req("Read", map[string]string{"file_path": p}))
		require.Equal(t, rule, got.RuleID, "%s: %s", p, got.Reason)
	}
	for _, p := range []string{"~/x", "~"} { // cordon's own tools expand nothing
		got = d.Decide(req("read_file", map[string]string{"path": p}))
		require.Equal(t, RuleOutsideWorkspace, got.RuleID, "%s: %s", p, got.Reason)
	}
	_, err = New(Config{Workspace: home, Cwd: "src"})
	require.ErrorContains(t, err, "not absolute")
}

// On a case-insensitive volume (macOS by default) a path spelled in
// another case opens the protected or denied file; it gets that file's
// answer.
func TestCaseVariantsOfProtectedPaths(t *testing.T) {
	home, d := homeFixture(t)
	defer func(old bool) { caseInsensitive = old }(caseInsensitive)
	for _, insensitive := range []bool{false, true} {
		caseInsensitive = insensitive
		for _, c := range []struct {
			req  Request
			rule string
		}{
			{req("Read", map[string]string{"file_path": home + "/.SSH/id_ed25519"}), RulePolicyDenied},
			{req("Grep", map[string]string{"pattern": "KEY", "path": home + "/.Ssh"}), RulePolicyDenied},
			{req("Write", map[string]string{"file_path": home + "/.GIT/hooks/pre-commit", "content": "x"}), RuleProtectedPath},
			{req("Write", map[string]string{"file_path": home + "/.VSCode/tasks.json", "content": "x"}), RuleProtectedPath},
			{req("Edit", map[string]string{"file_path": home + "/.BASHRC"}), RuleProtectedPath},
			{req("Read", map[string]string{"file_path": home + "/.ſſh/id_ed25519"}), RulePolicyDenied}, // ſ folds to s
		} {
			got := d.Decide(c.req)
			if !insensitive {
				// Here (Linux, case-sensitive) these are other, ordinary names.
				require.NotEqual(t, Deny, got.Action, "%s %s: %s", c.req.Name, c.req.Arguments, got.Reason)
				continue
			}
			require.Equal(t, c.rule, got.RuleID, "%s %s: %s", c.req.Name, c.req.Arguments, got.Reason)
			require.Contains(t, got.Reason, "case-insensitive")
		}
	}
}
