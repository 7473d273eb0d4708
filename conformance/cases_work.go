package conformance

import "strings"

// Ordinary work that must keep succeeding (no false denials), and leave
// the host exactly as the work says.
func workCases() []Case {
	return []Case{
		{Name: "work-nested-cordon", Class: Work, Summary: "cordon run inside a cordon sandbox runs its command under the outer sandbox (the state directory there is a mask it must not try to repair)",
			Run: func(h *H) {
				_, p := h.ws()
				// Written below the workspace's top, which the landlock
				// backend freezes (it holds protected names).
				h.Mkdir("ws/out")
				o := h.Sandbox(p, `"$CORDON" run --no-tty --workspace "$PWD" -- sh -c 'echo "$CORDON_SANDBOX" > out/nested.txt' && ok NESTED`, "CORDON="+h.Attack())
				h.Expect(o, "NESTED")
				h.Want("ws/out/nested.txt", h.Backend()+"\n")
			}},
		{Name: "work-files", Class: Work, Summary: "write, append, mkdir, mv, cp, rm in the workspace; the host shows exactly that",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/old.txt", "old\n")
				h.Write("ws/gone.txt", "bye\n")
				o := h.Sandbox(p, `echo hello > a.txt && ok WRITE; echo more >> a.txt && ok APPEND; mkdir -p d/e/f && ok MKDIR; mv old.txt d/e/f/moved.txt && ok MV; cp a.txt d/copy.txt && ok CP; rm gone.txt && ok RM; ln -s a.txt link && ok SYMLINK; chmod 600 a.txt && ok CHMOD`)
				h.Expect(o, "WRITE", "APPEND", "MKDIR", "MV", "CP", "RM", "SYMLINK", "CHMOD")
				h.Want("ws/a.txt", "hello\nmore\n")
				h.Want("ws/d/e/f/moved.txt", "old\n")
				h.Want("ws/d/copy.txt", "hello\nmore\n")
				h.Absent("ws/gone.txt")
				h.Absent("ws/old.txt")
			}},
		{Name: "work-tmp", Class: Work, Summary: "mktemp and mktemp -d in the private TMPDIR; /tmp is not written",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `[ -n "$TMPDIR" ] && [ -d "$TMPDIR" ] && ok TMPDIR; f=$(mktemp) && echo x > "$f" && ok MKTEMP && rm "$f"; d=$(mktemp -d) && echo x > "$d/f" && ok MKTEMP_D && rm -r "$d"`)
				h.Expect(o, "TMPDIR", "MKTEMP", "MKTEMP_D")
			}},
		{Name: "work-pipes-devices", Class: Work, Summary: "pipes, /dev/null, /dev/zero, /dev/urandom, /dev/shm, here-documents",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `[ "$(echo abc | tr a-z A-Z | cat)" = ABC ] && ok PIPE; echo x > /dev/null && ok DEVNULL_W; [ -z "$(cat /dev/null)" ] && ok DEVNULL_R; [ "$(head -c 16 /dev/urandom | wc -c)" -eq 16 ] && ok URANDOM; [ "$(head -c 4 /dev/zero | wc -c)" -eq 4 ] && ok ZERO; if [ "$(uname)" = Linux ]; then echo x > /dev/shm/t && rm /dev/shm/t && ok SHM; else ok SHM; fi; [ "$(cat <<EOT
here
EOT
)" = here ] && ok HEREDOC`)
				// Under landlock /dev/shm is the host's: the entry gate
				// lets the sandbox make its own objects there.
				h.Expect(o, "PIPE", "DEVNULL_W", "DEVNULL_R", "URANDOM", "ZERO", "HEREDOC", "SHM")
			}},
		{Name: "work-others-repository", Class: Work, Summary: "a workspace holding a repository of another user (root's, no .gitmodules) launches; the sandbox cannot create that repository's .gitmodules",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("ws/theirs/.git")
				h.KeepOwner("ws/theirs")
				h.KeepOwner("ws/theirs/.git")
				o := h.Sandbox(p, `ok RAN; echo '[submodule "x"]' > theirs/.gitmodules 2>/dev/null && ok WROTE_GITMODULES; true`)
				h.Expect(o, "RAN")
				if Marked(o, "WROTE_GITMODULES") {
					h.Errorf("the sandbox created theirs/.gitmodules:\n%s", o)
				}
				h.Absent("ws/theirs/.gitmodules")
			}},
		{Name: "work-git", Class: Work, Needs: []string{"git"}, Summary: "git status, diff, log and show in the workspace; add and commit are refused by default, saying why",
			Run: func(h *H) {
				_, p := h.ws()
				h.gitRepo("ws")
				h.Write("ws/README", "changed\n")
				o := h.Sandbox(p, `git status --short | grep -q README && ok STATUS; git diff | grep -q changed && ok DIFF; git log --oneline | grep -q init && ok LOG; git show --stat HEAD >/dev/null && ok SHOW; git add README 2>"$TMPDIR/err" || grep -qE "$WHY" "$TMPDIR/err" && ok ADD_REFUSED; rm -f "$TMPDIR/err"`, "WHY="+refusedCreate(h))
				h.Expect(o, "STATUS", "DIFF", "LOG", "SHOW", "ADD_REFUSED")
				if out := h.Host("ws", "git", "status", "--porcelain"); strings.TrimSpace(out) != "M README" {
					h.Errorf("host: git status after the sandbox is not just the edit:\n%s", out)
				}
			}},
		{Name: "work-git-commit", Class: Work, Needs: []string{"git"}, Summary: "with --allow-git-writes: git status, add and commit in the workspace; the commit is on the host",
			Run: func(h *H) {
				_, p := h.ws()
				p.GitWrites = true
				h.Host("ws", "git", "init", "-q")
				o := h.Sandbox(p, `git status --short && ok STATUS; echo code > main.go && git add main.go && ok ADD; git commit -q -m 'from the sandbox' && ok COMMIT; git log --oneline | grep -q 'from the sandbox' && ok LOG; git branch topic && ok BRANCH; git status --porcelain | grep -v '^??' | grep . || ok CLEAN`)
				h.Expect(o, "STATUS", "ADD", "COMMIT", "LOG", "BRANCH", "CLEAN")
				if out := h.Host("ws", "git", "log", "--format=%s"); !strings.Contains(out, "from the sandbox") {
					h.Errorf("host: the commit is not in the repository: %q", out)
				}
				if out := h.Host("ws", "git", "status", "--porcelain"); strings.TrimSpace(out) != "" {
					h.Errorf("host: git status is not clean after the sandbox's commit:\n%s", out)
				}
			}},
		{Name: "work-read-system", Class: Work, Summary: "read the system: /etc, /usr, list /, run programs",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `cat /etc/passwd >/dev/null && ok ETC; ls /usr/bin >/dev/null && ok USR; ls / >/dev/null && ok ROOT; id -u >/dev/null && ok EXEC; uname -a >/dev/null && ok UNAME`)
				h.Expect(o, "ETC", "USR", "EXEC", "UNAME")
				if h.Backend() != "landlock" {
					// Under landlock / cannot be listed: it holds denied
					// roots (cordon's state directory, credential stores),
					// so each entry is granted apart (docs/design.md).
					h.Expect(o, "ROOT")
				}
			}},
		{Name: "work-noop-leaves-host-unchanged", Class: Work, Summary: "a command that writes nothing leaves the host tree byte for byte as it was; no backend makes a mount stub for an absent protected name",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Write("ws/src/main.go", "package main\n")
				h.Write("outside/f", "x\n")
				p.Deny = []string{h.Path("ws/not-yet/secret"), h.Path("outside/f")}
				p.Readonly = []string{h.Path("ws/later.txt")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `ls -laR . >/dev/null; cat src/main.go >/dev/null; ls -la .envrc .vscode not-yet >/dev/null && ok STUBS_VISIBLE`)
				// No backend makes a mount stub any more: the entry gate
				// keeps absent protected names (docs/design.md).
				h.Refuse(o, "STUBS_VISIBLE")
				h.Unchanged(snap)
			}},
		{Name: "work-carve-out", Class: Work, Summary: "a writable root inside a denied one is readable and writable; a read-only root inside is readable",
			Run: func(h *H) {
				d := h.Mkdir("vault")
				pub := h.Mkdir("vault/pub")
				h.Write("vault/pub/readme", "public\n")
				ro := h.Write("vault/shared/ro.txt", "shared\n")
				h.Write("vault/secret", h.Secret)
				o := h.Sandbox(Policy{Deny: []string{d}, Writable: []string{pub}, Readonly: []string{ro}, Restrict: true},
					`cat vault/pub/readme >/dev/null && ok READ; echo x > vault/pub/new && ok WRITE; cat vault/shared/ro.txt >/dev/null && ok READ_RO; cat vault/secret`)
				h.Expect(o, "READ", "WRITE", "READ_RO")
				h.NoSecret(o)
				h.Want("vault/pub/new", "x\n")
			}},
	}
}

// refusedCreate is what a file made in a read-only directory is refused
// with (an egrep pattern): git's index.lock in .git. On native and bwrap
// the entry gate answers a name made there (EACCES) before the mount
// would (EROFS).
func refusedCreate(h *H) string {
	if h.Backend() == "landlock" {
		return "Permission denied"
	}
	return "Read-only file system|Permission denied"
}
