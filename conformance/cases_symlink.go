package conformance

import "encoding/json"

// Class 2: symlinks — policy paths given through links, links in writable
// roots that point at denied or non-writable places, links swapped in
// after the policy was computed.
func symlinkCases() []Case {
	return []Case{
		{Name: "symlink-to-denied-file", Class: 2, Summary: "read and write a denied file through relative and absolute links in the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("outside/secret", h.Secret)
				h.Symlink("../outside/secret", "ws/rel")
				h.Symlink(t, "ws/abs")
				p.Deny = []string{t}
				snap := h.Snapshot()
				o := h.Sandbox(p, `cat rel abs; cp -L abs copy; cat copy; echo pwn > rel && ok WRITE_REL; echo pwn >> abs && ok WRITE_ABS`)
				h.NoSecret(o)
				h.Refuse(o, "WRITE_REL", "WRITE_ABS")
				h.SecretOnlyIn("outside/secret")
				h.Unchanged(snap, "ws/copy")
			}},
		{Name: "symlink-to-denied-dir", Class: 2, Summary: "list and read a denied directory through a link in the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("outside/keys")
				h.Write("outside/keys/id", h.Secret)
				h.Symlink(d, "ws/keys")
				p.Deny = []string{d}
				o := h.Sandbox(p, `ls keys/ && ok LISTED; cat keys/id; cat keys/./id; find -L keys; echo x > keys/new && ok CREATE`)
				h.NoSecret(o)
				h.Refuse(o, "LISTED", "CREATE")
				h.Absent("outside/keys/new")
			}},
		{Name: "symlink-to-readonly", Class: 2, Summary: "write a read-only file through a link placed in the workspace",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("ws/ro.txt", "original\n")
				h.Symlink("ro.txt", "ws/link")
				p.Readonly = []string{t}
				o := h.Sandbox(p, `echo pwn > link && ok WRITE; echo pwn >> "$PWD/link" && ok APPEND; ln -s ro.txt l2 && echo pwn > l2 && ok NEWLINK`)
				h.Refuse(o, "WRITE", "APPEND", "NEWLINK")
				h.Want("ws/ro.txt", "original\n")
			}},
		{Name: "symlink-to-outside", Class: 2, Summary: "with restrictWrites, write outside through links to a file and a directory, old and new",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/f", "original\n")
				h.Symlink("../outside/f", "ws/f")
				h.Symlink("../outside", "ws/out")
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo pwn >> f && ok FILE; echo x > out/new && ok DIR; ln -s "$FIX/outside" made && echo x > made/new2 && ok NEWLINK; ln -s "$FIX/outside/g" dangling && echo x > dangling && ok DANGLING`)
				h.Refuse(o, "FILE", "DIR", "NEWLINK", "DANGLING")
				h.Unchanged(snap, "ws")
			}},
		{Name: "policy-symlinked-deny", Class: 2, Summary: "a denied root given through a symlinked spelling is denied at its real path too",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("real/secret.txt", h.Secret)
				h.Symlink("real", "alias")
				p.Deny = []string{h.Path("alias/secret.txt")}
				o := h.Sandbox(p, `cat "$FIX/real/secret.txt"; cat "$FIX/alias/secret.txt"; cat ../real/secret.txt`)
				h.NoSecret(o)
			}},
		{Name: "policy-dotdot-spelling", Class: 2, Summary: "roots spelled with .., //, ./ and a trailing slash are denied and read-only at their real paths",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/secret", h.Secret)
				h.Write("ws/ro/f", "original\n")
				h.Mkdir("ws/sub")
				p.Deny = []string{h.Path("ws/sub/../../outside//secret")}
				p.Readonly = []string{h.Path("ws/./ro/")}
				o := h.Sandbox(p, `cat ../outside/secret; echo pwn > ro/f && ok WRITE; echo x > ro/new && ok CREATE`)
				h.NoSecret(o)
				h.Refuse(o, "WRITE", "CREATE")
				h.Want("ws/ro/f", "original\n")
				h.Absent("ws/ro/new")
			}},
		{Name: "policy-symlinked-readonly-dir", Class: 2, Summary: "a read-only directory given through a link to an ancestor stays read-only at its real path",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/real/conf/f", "original\n")
				h.Symlink("ws/real", "alias")
				p.Readonly = []string{h.Path("alias/conf")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo pwn > real/conf/f && ok WRITE; echo x > real/conf/new && ok CREATE; echo pwn > "$FIX/alias/conf/f" && ok ALIAS`)
				h.Refuse(o, "WRITE", "CREATE", "ALIAS")
				h.Unchanged(snap)
			}},
		{Name: "policy-symlinked-workspace", Class: 2, Summary: "a workspace given through a link protects the real tree's .git/hooks and still allows work",
			Run: func(h *H) {
				h.Mkdir("real/ws/src")
				h.Host("real/ws", "git", "init", "-q")
				link := h.Symlink("real/ws", "wslink")
				o := h.Sandbox(Policy{Workspace: link}, `echo x > "$FIX/real/ws/.git/hooks/pre-commit" && ok HOOK; echo x > .git/hooks/post-checkout && ok HOOK_REL; echo work > "$FIX/real/ws/src/file" && ok WORK`)
				h.Refuse(o, "HOOK", "HOOK_REL")
				h.Expect(o, "WORK")
				h.Absent("real/ws/.git/hooks/pre-commit")
				h.Absent("real/ws/.git/hooks/post-checkout")
			}},
		{Name: "policy-file-symlinked", Class: 2, Summary: "a JSON policy file whose roots are symlinked spellings",
			Run: func(h *H) {
				h.Write("real/secret.txt", h.Secret)
				h.Write("real/ro.txt", "original\n")
				h.Mkdir("real/sub")
				h.Symlink("real", "alias")
				b, _ := json.Marshal(map[string]any{
					"deniedRoots": []string{h.Path("alias/secret.txt")}, "readonlyRoots": []string{h.Path("alias/ro.txt")},
					"writableRoots": []string{h.Path("alias")}, "baseWritableRoots": []string{}, "restrictWrites": true})
				f := h.Write("policy.json", string(b))
				o := h.Sandbox(Policy{File: f}, `cat real/secret.txt alias/secret.txt; echo pwn > real/ro.txt && ok WRITE; echo ok > real/sub/free && ok FREE`)
				h.NoSecret(o)
				h.Refuse(o, "WRITE")
				h.Expect(o, "FREE")
				h.Want("real/ro.txt", "original\n")
			}},
		{Name: "swap-dir-for-symlink", Class: 2, Summary: "replace the directory above a read-only file with a link after the policy was computed",
			Run: func(h *H) {
				_, p := h.ws()
				t := h.Write("ws/cfg/settings.json", "original\n")
				h.Mkdir("ws/other")
				p.Readonly = []string{t}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv cfg cfg.old && ok MV; rm -rf cfg; [ -d cfg ] || ok RM; ln -sT other cfg 2>/dev/null && ok LINKED; echo pwn > cfg/settings.json; echo pwn > cfg.old/settings.json; echo pwn > "$T" && ok WRITE`, "T="+t)
				h.Refuse(o, "MV", "RM", "LINKED", "WRITE")
				h.Unchanged(snap, "ws/other")
			}},
		{Name: "swap-stub-for-symlink", Class: 2, Summary: "replace a protected name that did not exist (kept by the entry gate) with a link or a file",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("outside/evil", "echo pwned\n")
				snap := h.Snapshot()
				o := h.Sandbox(p, `rmdir .envrc && ok RMDIR; mv .envrc .e2 && ok MV; ln -sfn "$FIX/outside/evil" .envrc && ok LINK; echo evil > .envrc && ok WRITE; rm -rf .vscode && ln -s "$FIX/outside" .vscode && ok VSCODE`)
				h.Refuse(o, "RMDIR", "MV", "LINK", "WRITE", "VSCODE")
				h.Unchanged(snap)
			}},
	}
}
