package conformance

// Class 4: hard links to read-only (or denied) files from writable places.
func hardlinkCases() []Case {
	return []Case{
		{Name: "hardlink-readonly-file", Class: 4, Summary: "hard-link a read-only file into the workspace and TMPDIR, write the link",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Write("ws/ro.txt", "original\n")}
				o := h.Sandbox(p, `ln ro.txt l && ok LINK; echo pwn >> l; ln ro.txt "$TMPDIR/l" && ok LINK_TMP; echo pwn >> "$TMPDIR/l"; rm -f "$TMPDIR/l"`)
				h.Refuse(o, "LINK", "LINK_TMP")
				h.Want("ws/ro.txt", "original\n")
			}},
		{Name: "hardlink-readonly-dir-child", Class: 4, Summary: "hard-link a file inside a read-only directory into the workspace, write the link",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Mkdir("ws/ro")}
				h.Write("ws/ro/f", "original\n")
				o := h.Sandbox(p, `ln ro/f l && ok LINK; echo pwn >> l`)
				h.Refuse(o, "LINK")
				h.Want("ws/ro/f", "original\n")
			}},
		{Name: "hardlink-denied-file", Class: 4, Summary: "hard-link a denied file and read the link",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Write("ws/secret.txt", h.Secret)}
				o := h.Sandbox(p, `ln secret.txt l && ok LINK; cat l; ln -P secret.txt l2; cat l2`)
				h.NoSecret(o)
				h.Refuse(o, "LINK")
			}},
		{Name: "hardlink-outside-file", Class: 4, Summary: "with restrictWrites, hard-link a non-writable file from outside into the workspace, write the link",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/f", "original\n")
				o := h.Sandbox(p, `ln "$FIX/outside/f" l && ok LINK; echo pwn >> l`)
				h.Refuse(o, "LINK")
				h.Want("outside/f", "original\n")
			}},
		{Name: "hardlink-git-config", Class: 4, Summary: "hard-link .git/config into the workspace and add a core.fsmonitor command through the link",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				cfg, _ := h.Read("ws/.git/config")
				o := h.Sandbox(p, `ln .git/config cfg && ok LINK; printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> cfg`)
				h.Refuse(o, "LINK")
				h.Want("ws/.git/config", cfg)
			}},
	}
}

// Class 5: paths that do not exist at launch stay denied or protected when
// the process creates them.
func notYetCases() []Case {
	return []Case{
		{Name: "create-denied-missing-file", Class: 5, Summary: "create a denied path that does not exist yet, as a file and as a directory",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Path("ws/secret.env")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo x > secret.env && ok FILE; mkdir -p secret.env/sub && ok DIR; echo x > secret.env/f && ok CHILD; rmdir secret.env && ok RMDIR; ls secret.env && ok LISTED`)
				h.Refuse(o, "FILE", "DIR", "CHILD", "RMDIR", "LISTED")
				h.Unchanged(snap)
				h.Absent("ws/secret.env")
			}},
		{Name: "create-denied-missing-deep", Class: 5, Summary: "create a denied path whose parents do not exist yet either",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Path("ws/a/b/c")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mkdir -p a/b/c && echo x > a/b/c/f && ok CREATE; echo x > a/b/c/g && ok CHILD`)
				h.Refuse(o, "CREATE", "CHILD")
				h.Unchanged(snap)
				h.Absent("ws/a")
			}},
		{Name: "create-readonly-missing", Class: 5, Summary: "create a read-only path that does not exist yet",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Path("ws/conf")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo x > conf && ok FILE; echo x > conf/f && ok CHILD; mkdir conf/d && ok MKDIR`)
				h.Refuse(o, "FILE", "CHILD", "MKDIR")
				h.Unchanged(snap)
			}},
		{Name: "create-agent-file-missing", Class: 5, Summary: "in a writable agent home (~/.gemini), its settings, trust files and per-project places that do not exist yet stay absent, and cannot be made by O_CREAT, mkdir, rename or symlink; the agent's own files beside them are made; the host's home afterwards holds only those",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("home/.gemini")
				p.Writable = []string{h.Path("home/.gemini")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `g="$HOME/.gemini"
[ ! -e "$g/GEMINI.md" ] && [ ! -e "$g/settings.json" ] && [ ! -e "$g/trustedFolders.json" ] && [ ! -e "$g/history" ] && ok ABSENT
echo '{"/":"TRUST_FOLDER"}' > "$g/trustedFolders.json" && ok CREATE
echo x >> "$g/settings.json" && ok APPEND
mkdir "$g/GEMINI.md" && ok MKDIR
echo '{"/":"TRUST_FOLDER"}' > "$g/new.json" && ok WORK_TMP; mv -f "$g/new.json" "$g/trustedFolders.json" && ok RENAME; rm -f "$g/new.json"
ln -s /etc/passwd "$g/AGENTS.md" && ok SYMLINK
ln -sf /etc/passwd "$g/GEMINI.md" && ok SYMLINK_F
rm "$g/settings.json" && ok REMOVE
mkdir -p "$g/history/p" && ok HISTORY
echo id > "$g/installation_id" && ok WORK_FILE
mkdir -p "$g/work/p" && echo h > "$g/work/p/x" && ok WORK_DIR`)
				// history/ is whose checkpoints a later session restores
				// (workspace.AgentHomes): only this project's entry is made,
				// by cordon on the host, under --agent gemini.
				h.Refuse(o, "CREATE", "APPEND", "MKDIR", "RENAME", "SYMLINK", "SYMLINK_F", "REMOVE", "HISTORY")
				h.Expect(o, "ABSENT", "WORK_TMP", "WORK_FILE", "WORK_DIR")
				h.Want("home/.gemini/installation_id", "id\n")
				h.Want("home/.gemini/work/p/x", "h\n")
				h.Unchanged(snap, "home/.gemini/installation_id", "home/.gemini/work")
				for _, f := range []string{"trustedFolders.json", "settings.json", "GEMINI.md", "AGENTS.md", "commands", "new.json", "history"} {
					h.Absent("home/.gemini/" + f)
				}
			}},
		{Name: "create-denied-missing-open-mode", Class: 5, Summary: "without restrictWrites, create a denied path that does not exist yet, absolute and relative",
			Run: func(h *H) {
				h.Mkdir("sub")
				snap := h.Snapshot()
				o := h.Sandbox(Policy{Deny: []string{h.Path("newsecret"), h.Path("sub/later")}}, `echo x > "$FIX/newsecret" && ok ABS; cd sub && echo x > later && ok REL; echo x > ../sub/later/f && ok CHILD`)
				h.Refuse(o, "ABS", "REL", "CHILD")
				h.Unchanged(snap)
			}},
	}
}
