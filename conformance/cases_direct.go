package conformance

// Class 1: direct read, list or write of denied roots; writes to readonly
// roots and outside writable roots.
func directCases() []Case {
	return []Case{
		{Name: "deny-read-file", Class: 1, Summary: "read a denied file by absolute path with cat, head, cp, dd, grep",
			Run: func(h *H) {
				w, p := h.ws()
				t := h.Write("ws/secret.txt", h.Secret)
				p.Deny = []string{t}
				o := h.Sandbox(p, `cat "$T"; head -c 99 "$T"; dd if="$T" 2>&1; grep -r . "$W"; cp "$T" "$W/copy" && cat "$W/copy"`, "T="+t, "W="+w)
				h.NoSecret(o)
				h.SecretOnlyIn("ws/secret.txt")
			}},
		{Name: "deny-read-file-relative", Class: 1, Summary: "read a denied file through relative spellings from inside its directory",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("ws/sub")
				p.Deny = []string{h.Write("ws/secret.txt", h.Secret)}
				o := h.Sandbox(p, `cat secret.txt; cat ./secret.txt; cat sub/../secret.txt; cd sub && cat ../secret.txt; cat ../../ws/secret.txt; cat .//..//secret.txt`)
				h.NoSecret(o)
			}},
		{Name: "deny-list-dir", Class: 1, Summary: "list a denied directory whose file names hold the secret; read its files",
			Run: func(h *H) {
				w, p := h.ws()
				d := h.Mkdir("ws/private")
				h.Write("ws/private/"+h.Secret+".key", h.Secret)
				h.Write("ws/private/id", h.Secret)
				p.Deny = []string{d}
				o := h.Sandbox(p, `ls -la "$D"; find "$D"; cat "$D"/*; cat "$D/id"; echo "$D"/*; ls "$D" >/dev/null && ok LISTED; cd "$D" && ls . && ok LISTED_CWD; tar cf - -C "$W" private | od -c | head -50`, "D="+d, "W="+w)
				h.NoSecret(o)
				h.Refuse(o, "LISTED", "LISTED_CWD")
			}},
		{Name: "deny-read-dir-outside-workspace", Class: 1, Summary: "read a denied directory outside the workspace, relative and absolute",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("outside/keys")
				h.Write("outside/keys/id", h.Secret)
				p.Deny = []string{d}
				o := h.Sandbox(p, `cat ../outside/keys/id; cat "$D/id"; ls ../outside/keys && ok LISTED; cat ../outside/keys/*`, "D="+d)
				h.NoSecret(o)
				h.Refuse(o, "LISTED")
			}},
		{Name: "deny-credentials-in-home", Class: 1, Summary: "the workspace preset denies ~/.ssh, ~/.aws, ~/.netrc and friends",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("home/.ssh/id_ed25519", h.Secret)
				h.Write("home/.aws/credentials", h.Secret)
				h.Write("home/.netrc", h.Secret)
				h.Write("home/.git-credentials", h.Secret)
				h.Write("home/.docker/config.json", h.Secret)
				o := h.Sandbox(p, `cat "$HOME/.ssh/id_ed25519" "$HOME/.aws/credentials" "$HOME/.netrc" "$HOME/.git-credentials" "$HOME/.docker/config.json"; ls "$HOME/.ssh" && ok LISTED; grep -r . "$HOME"`)
				h.NoSecret(o)
				h.Refuse(o, "LISTED")
			}},
		{Name: "deny-write-file", Class: 1, Summary: "overwrite, append, truncate, remove, chmod, replace a denied file",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("ws/secret.txt", h.Secret)
				p.Deny = []string{t}
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo pwn > "$T" && ok OVERWRITE; echo pwn >> "$T" && ok APPEND; ( : > "$T" ) && ok TRUNCATE; chmod 666 "$T" && ok CHMOD; touch "$T" && ok TOUCH; rm -f "$T" && ok RM; ln -sf /etc/passwd "$T" && ok REPLACE`, "T="+t)
				h.Refuse(o, "OVERWRITE", "APPEND", "TRUNCATE", "CHMOD", "TOUCH", "RM", "REPLACE")
				h.Unchanged(snap)
			}},
		{Name: "deny-write-dir", Class: 1, Summary: "create, remove and rename inside a denied directory; remove it",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.deniedDir(&p, "ws/private")
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo x > "$D/new" && ok CREATE; mkdir "$D/sub" && ok MKDIR; rm "$D/id" && ok RM; touch "$D/id" && ok TOUCH; rm -rf "$D" ; [ -e "$D" ] || ok RMDIR; chmod 777 "$D" && ok CHMOD`, "D="+d)
				h.Refuse(o, "CREATE", "MKDIR", "RM", "TOUCH", "RMDIR", "CHMOD")
				h.Unchanged(snap)
			}},
		{Name: "readonly-write-file", Class: 1, Summary: "overwrite, append, truncate, remove, chmod, touch a read-only file in the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("ws/ro.txt", "original\n")
				p.Readonly = []string{t}
				snap := h.Snapshot()
				o := h.Sandbox(p, `cat ro.txt >/dev/null && ok READ; echo pwn > ro.txt && ok OVERWRITE; echo pwn >> "$T" && ok APPEND; ( : > ro.txt ) && ok TRUNCATE; chmod 666 ro.txt && ok CHMOD; touch -d 2001-01-01 ro.txt && ok TOUCH; rm -f ro.txt && ok RM; sed -i s/original/pwn/ ro.txt && ok SED`, "T="+t)
				h.Expect(o, "READ")
				h.Refuse(o, "OVERWRITE", "APPEND", "TRUNCATE", "CHMOD", "TOUCH", "RM", "SED")
				h.Unchanged(snap)
			}},
		{Name: "readonly-write-dir", Class: 1, Summary: "create, remove, rename and chmod inside a read-only directory",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.readonlyDir(&p)
				snap := h.Snapshot()
				o := h.Sandbox(p, `ls ro >/dev/null && ok LIST; echo x > ro/new && ok CREATE; mkdir ro/sub && ok MKDIR; rm -f ro/f && ok RM; mv ro/f ro/g && ok MV; chmod 777 ro && ok CHMOD; echo x > "$D/f" && ok OVERWRITE`, "D="+d)
				h.Expect(o, "LIST")
				h.Refuse(o, "CREATE", "MKDIR", "RM", "MV", "CHMOD", "OVERWRITE")
				h.Unchanged(snap)
			}},
		{Name: "restrict-write-outside", Class: 1, Summary: "with restrictWrites, write files and directories outside the writable roots",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/f", "original\n")
				snap := h.Snapshot()
				esc := h.Dir + ".escape"
				h.Cleanup(func() { removeAll(esc) })
				o := h.Sandbox(p, `echo pwn >> "$FIX/outside/f" && ok APPEND; echo x > "$FIX/outside/new" && ok CREATE; mkdir "$FIX/newdir" && ok MKDIR; echo x > "$HOME/x" && ok HOME; echo x > ../outside/rel && ok RELATIVE; echo x > "$E" && ok SIBLING; rm -f "$FIX/outside/f" && ok RM`, "E="+esc)
				h.Refuse(o, "APPEND", "CREATE", "MKDIR", "HOME", "RELATIVE", "SIBLING", "RM")
				h.Unchanged(snap, "ws")
				if exists(esc) {
					h.Errorf("host: %s was created", esc)
				}
			}},
		{Name: "open-mode-denied", Class: 1, Summary: "without restrictWrites, read and write a denied directory and file while other writes work",
			Run: func(h *H) {
				d := h.Mkdir("secrets")
				h.Write("secrets/id", h.Secret)
				f := h.Write("token", h.Secret)
				h.Mkdir("free")
				snap := h.Snapshot()
				o := h.Sandbox(Policy{Deny: []string{d, f}}, `cat "$D/id" token; ls "$D" && ok LISTED; echo x > "$D/new" && ok CREATE; echo x >> token && ok APPEND; rm -rf "$D" token; [ -e token ] || ok RM; echo free > free/free.txt && ok FREE`, "D="+d)
				h.NoSecret(o)
				h.Expect(o, "FREE")
				h.Refuse(o, "LISTED", "CREATE", "APPEND", "RM")
				h.Unchanged(snap, "free/free.txt")
				h.Want("free/free.txt", "free\n")
			}},
		{Name: "open-mode-readonly", Class: 1, Summary: "without restrictWrites, write a read-only file and directory",
			Run: func(h *H) {
				f := h.Write("ro.txt", "original\n")
				d := h.Mkdir("rodir")
				h.Write("rodir/f", "original\n")
				snap := h.Snapshot()
				o := h.Sandbox(Policy{Readonly: []string{f, d}}, `echo pwn > ro.txt && ok OVERWRITE; rm -f ro.txt && ok RM; echo x > rodir/new && ok CREATE; echo pwn >> rodir/f && ok APPEND; rm -rf rodir; [ -e rodir ] || ok RMDIR`)
				h.Refuse(o, "OVERWRITE", "RM", "CREATE", "APPEND", "RMDIR")
				h.Unchanged(snap)
			}},
	}
}
