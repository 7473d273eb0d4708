package conformance

// Class 3: moves — rename a denied or read-only root, or any ancestor, away
// and re-create the path.
func moveCases() []Case {
	return []Case{
		{Name: "rename-denied-file", Class: 3, Summary: "rename a denied file away and read it under its new name",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Write("ws/secret.txt", h.Secret)}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv secret.txt s2 && ok MV; cat s2; mv -f secret.txt ../s3; cat ../s3; cp secret.txt s4; cat s4`)
				h.NoSecret(o)
				h.Refuse(o, "MV")
				h.Unchanged(snap, "ws/s4")
				h.SecretOnlyIn("ws/secret.txt")
			}},
		{Name: "rename-denied-dir", Class: 3, Summary: "rename a denied directory away, list and read it, re-create the name",
			Run: func(h *H) {
				_, p := h.ws()
				h.deniedDir(&p, "ws/private")
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv private p2 && ok MV; ls p2; cat p2/id; mkdir -p private2 && mv private2 private && ok REPLACE`)
				h.NoSecret(o)
				h.Refuse(o, "MV", "REPLACE")
				h.Unchanged(snap, "ws/private2")
			}},
		{Name: "rename-readonly-dir-recreate", Class: 3, Summary: "move a read-only directory aside and re-create it with planted content",
			Run: func(h *H) {
				_, p := h.ws()
				h.readonlyDir(&p)
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv ro ro.old && ok MV; mkdir -p ro; echo pwn > ro/f && ok PLANT; echo pwn > ro.old/f`)
				h.Refuse(o, "MV", "PLANT")
				h.Unchanged(snap)
			}},
		{Name: "rename-readonly-file-recreate", Class: 3, Summary: "move a read-only file aside and put a new one in its place",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Write("ws/ro.txt", "original\n")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv ro.txt ro.old && ok MV; echo pwn > new && mv -f new ro.txt && ok REPLACE; cp new ro.txt && ok CP`)
				h.Refuse(o, "MV", "REPLACE", "CP")
				h.Unchanged(snap, "ws/new")
			}},
		{Name: "rename-ancestor-of-denied", Class: 3, Summary: "rename the parent and grandparent of a denied file and read it through the new path",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Write("ws/a/b/secret", h.Secret)}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv a/b a/b2 && ok MV_PARENT; cat a/b2/secret; mv a a2 && ok MV_GRAND; cat a2/b/secret; mkdir -p a/b; echo pwn > a/b/secret`)
				h.NoSecret(o)
				h.Refuse(o, "MV_PARENT", "MV_GRAND")
				h.Unchanged(snap)
			}},
		{Name: "rename-ancestor-of-readonly", Class: 3, Summary: "rename the directory holding a read-only file, then write the file",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Write("ws/a/b/ro.txt", "original\n")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv a/b a/b2 && ok MV; echo pwn > a/b2/ro.txt; mv a a2 && ok MV_GRAND; echo pwn > a2/b/ro.txt`)
				h.Refuse(o, "MV", "MV_GRAND")
				h.Unchanged(snap)
			}},
		{Name: "rename-ancestor-open-mode", Class: 3, Summary: "without restrictWrites, rename the ancestors of a denied file up to the fixture",
			Run: func(h *H) {
				t := h.Write("x/y/secret", h.Secret)
				snap := h.Snapshot()
				o := h.Sandbox(Policy{Deny: []string{t}}, `mv "$FIX/x/y" "$FIX/x/y2" && ok MV_PARENT; cat "$FIX"/x/y2/secret; mv "$FIX/x" "$FIX/x2" && ok MV_GRAND; cat "$FIX"/x2/y/secret; mv "$FIX" "$FIX.moved" && ok MV_FIX; cat "$FIX.moved/x/y/secret"`)
				h.NoSecret(o)
				h.Refuse(o, "MV_PARENT", "MV_GRAND", "MV_FIX")
				if exists(h.Dir + ".moved") {
					h.Errorf("host: the fixture was renamed to %s.moved", h.Dir)
					restore(h.Dir+".moved", h.Dir)
				}
				h.Unchanged(snap)
			}},
		{Name: "rename-python", Class: 3, Needs: []string{"python3"}, Summary: "os.rename/os.replace of a denied root's ancestors and of a read-only root (python3)",
			Run: func(h *H) {
				_, p := h.ws()
				p.Deny = []string{h.Write("ws/a/secret", h.Secret)}
				p.Readonly = []string{h.Write("ws/ro.txt", "original\n")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `python3 - <<'PY'
import os
def tryit(name, f, *a):
    try:
        f(*a); print("@@%s@@" % name)
    except OSError as e:
        print(name, e)
tryit("RENAME", os.rename, "a", "a2")
tryit("REPLACE", os.replace, "ro.txt", "ro2")
open("evil", "w").write("pwn")
tryit("OVER", os.replace, "evil", "ro.txt")
for p in ("a2/secret", "a/secret"):
    try: print(open(p).read())
    except OSError as e: print(p, e)
PY`)
				h.NoSecret(o)
				h.Refuse(o, "RENAME", "REPLACE", "OVER")
				h.Unchanged(snap, "ws/evil")
			}},
		{Name: "rename-perl", Class: 3, Needs: []string{"perl"}, Summary: "perl rename of a denied directory and of a read-only file's parent",
			Run: func(h *H) {
				_, p := h.ws()
				h.deniedDir(&p, "ws/private")
				p.Readonly = []string{h.Write("ws/c/ro.txt", "original\n")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `perl -e 'rename("private","p2") and print "\@\@RENAME\@\@\n"; rename("c","c2") and print "\@\@RENAME_PARENT\@\@\n"; open(F,"<","p2/id") and print <F>;'`)
				h.NoSecret(o)
				h.Refuse(o, "RENAME", "RENAME_PARENT")
				h.Unchanged(snap)
			}},
		{Name: "rename-syscall", Class: 3, Backends: linuxOnly, Summary: "rename(2) and renameat2(RENAME_EXCHANGE) of a read-only directory and a denied root's parent (cordon __attack)",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("ws/ro")
				h.Write("ws/ro/f", "original\n")
				h.Write("ws/evil/f", "pwn\n")
				p.Readonly = []string{d}
				p.Deny = []string{h.Write("ws/a/secret", h.Secret)}
				snap := h.Snapshot()
				o := h.Sandbox(p, `"$ATTACK" __attack exchange ro evil; "$ATTACK" __attack rename a a2; cat a2/secret; "$ATTACK" __attack exchange a evil; cat evil/secret`)
				h.NoSecret(o)
				h.Refuse(o, "RENAMED")
				h.Unchanged(snap)
			}},
		{Name: "rename-git-dir-away", Class: 3, Summary: "move .git aside and re-create .git/hooks with a planted hook",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				snap := h.Snapshot()
				o := h.Sandbox(p, `mv .git .git.old && ok MV; mkdir -p .git/hooks; printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit && ok PLANT; mv .git/hooks .git/h2 && ok MV_HOOKS`)
				h.Refuse(o, "MV", "PLANT", "MV_HOOKS")
				h.Unchanged(snap)
			}},
		{Name: "rename-workspace-away", Class: 3, Summary: "without restrictWrites, rename the writable root that holds a read-only file",
			Run: func(h *H) {
				w := h.Mkdir("ws")
				ro := h.Write("ws/ro.txt", "original\n")
				snap := h.Snapshot()
				o := h.Sandbox(Policy{Writable: []string{w}, Readonly: []string{ro}}, `mv "$FIX/ws" "$FIX/ws2" && ok MV; mkdir -p "$FIX/ws"; echo pwn > "$FIX/ws/ro.txt"`)
				h.Refuse(o, "MV")
				if exists(h.Path("ws2")) {
					h.Errorf("host: the workspace was renamed to %s", h.Path("ws2"))
					restore(h.Path("ws2"), h.Path("ws"))
				}
				h.Unchanged(snap)
			}},
	}
}
