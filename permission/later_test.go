package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/workspace"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestDecideWhatRunsLater: a write to agents' or editors' configuration
// at any depth (existing or not, in any spelling that opens it) and, with
// HOME in the workspace, to what a login, the session bus, the desktop or
// a shell reads, is denied as protected, never asked; reads and writes
// beside them are not.
func TestDecideWhatRunsLater(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(ws, "home")
	for rel, content := range map[string]string{
		"sub/.cursor/mcp.json": "{}", "sub/.claude/settings.json": "{}", "home/.bashrc": "", "src/main.go": "",
	} {
		p := filepath.Join(ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Symlink("sub/.cursor", filepath.Join(ws, "cur")))
	p, err := workspace.Preset(ws, workspace.Options{Home: home, ConfigHome: filepath.Join(home, ".config"), DataHome: filepath.Join(home, ".local/share")})
	require.NoError(t, err)
	d, err := New(Config{Workspace: ws, Policy: &p})
	require.NoError(t, err)

	write := func(path string) Request {
		return req("Write", map[string]string{"file_path": path, "content": "x"})
	}
	tests := []struct {
		name   string
		req    Request
		action Action
		rule   string
	}{
		{"new nested skill", write(ws + "/pkg/a/.claude/skills/x/SKILL.md"), Deny, RuleProtectedPath},
		{"existing nested .claude", req("Edit", map[string]string{"file_path": ws + "/sub/.claude/settings.json"}), Deny, RuleProtectedPath},
		{"nested .cursor hooks", write(ws + "/sub/.cursor/hooks.json"), Deny, RuleProtectedPath},
		{"through a link to .cursor", write(ws + "/cur/mcp.json"), Deny, RuleProtectedPath},
		{"nested .mcp.json", write(ws + "/sub/.mcp.json"), Deny, RuleProtectedPath},
		{"nested .zed", write(ws + "/a/b/.zed/settings.json"), Deny, RuleProtectedPath},
		{"nested .helix", write(ws + "/a/.helix/languages.toml"), Deny, RuleProtectedPath},
		{"nested .nvim.lua", write(ws + "/a/b/c/.nvim.lua"), Deny, RuleProtectedPath},
		{"nested .exrc", write(ws + "/a/.exrc"), Deny, RuleProtectedPath},
		{"nested .nvimrc relative", req("write_file", map[string]string{"path": "a/.nvimrc", "content": "x"}), Deny, RuleProtectedPath},
		{"nested .vscode", write(ws + "/deep/er/.vscode/tasks.json"), Deny, RuleProtectedPath},
		{"nested .envrc", write(ws + "/deep/.envrc"), Deny, RuleProtectedPath},
		{"dotdot into .cursor", write(ws + "/src/../sub/.cursor/mcp.json"), Deny, RuleProtectedPath},
		{"top .helix", write(ws + "/.helix/languages.toml"), Deny, RuleProtectedPath},
		{"top .github/hooks", write(ws + "/.github/hooks/evil.json"), Deny, RuleProtectedPath},
		{"nested .github/hooks", write(ws + "/sub/.github/hooks/x.json"), Deny, RuleProtectedPath},
		{"nested .devcontainer", write(ws + "/a/.devcontainer/devcontainer.json"), Deny, RuleProtectedPath},
		{"nested opencode.json", write(ws + "/a/opencode.json"), Deny, RuleProtectedPath},
		{"nested .continue", write(ws + "/a/.continue/mcpServers/x.yaml"), Deny, RuleProtectedPath},
		{"top mise.toml", write(ws + "/mise.toml"), Deny, RuleProtectedPath},
		{"nested .mise.local.toml", write(ws + "/a/.mise.local.toml"), Deny, RuleProtectedPath},
		{"nested mise/config.toml", write(ws + "/a/mise/config.toml"), Deny, RuleProtectedPath},
		{"nested .config/mise.toml", write(ws + "/a/.config/mise.toml"), Deny, RuleProtectedPath},
		{"nested .config/mise/conf.d", write(ws + "/a/.config/mise/conf.d/x.toml"), Deny, RuleProtectedPath},
		{"nested .tool-versions", write(ws + "/a/.tool-versions"), Deny, RuleProtectedPath},
		{"nested flake.nix", write(ws + "/a/flake.nix"), Deny, RuleProtectedPath},
		{"nested devbox.json", write(ws + "/a/devbox.json"), Deny, RuleProtectedPath},
		{"other settings beside .config/mise", write(ws + "/a/.config/other.toml"), Ask, RuleWriteApproval},
		{"a workflow beside .github/hooks", write(ws + "/.github/workflows/ci.yml"), Ask, RuleWriteApproval},
		{"hooks not under .github", write(ws + "/src/hooks/x.json"), Ask, RuleWriteApproval},
		{"systemd unit in .local/share", write(home + "/.local/share/systemd/user/default.target.wants/x.service"), Deny, RuleProtectedPath},
		{"dbus service", write(home + "/.local/share/dbus-1/services/org.x.service"), Deny, RuleProtectedPath},
		{"inputrc", write(home + "/.inputrc"), Deny, RuleProtectedPath},
		{"pam_environment", write(home + "/.pam_environment"), Deny, RuleProtectedPath},
		{"environment.d", write(home + "/.config/environment.d/x.conf"), Deny, RuleProtectedPath},
		{"autostart", write(home + "/.config/autostart/x.desktop"), Deny, RuleProtectedPath},
		{"read nested .claude", req("Read", map[string]string{"file_path": ws + "/sub/.claude/settings.json"}), Allow, RuleReadAllow},
		{"look-alike name", write(ws + "/sub/.claudex/x"), Ask, RuleWriteApproval},
		{"name as a file's suffix", write(ws + "/sub/x.cursor"), Ask, RuleWriteApproval},
		{"beside loaders", write(home + "/.local/share/notes.txt"), Ask, RuleWriteApproval},
		{"ordinary file", write(ws + "/src/main.go"), Ask, RuleWriteApproval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.Decide(tt.req)
			if diff := cmp.Diff([]string{string(tt.action), tt.rule}, []string{string(got.Action), got.RuleID}); diff != "" {
				t.Fatalf("decision mismatch (-want +got):\n%s\nreason: %s", diff, got.Reason)
			}
		})
	}
}
