package conformance

import (
	"os"
	"slices"
	"strings"
)

// The names the model protects that the workspace does not hold yet:
// nothing of cordon's stands for them in the project (native and bwrap
// keep them with the entry gate, landlock with its freeze and gate), and
// each call that makes a name is refused there, while the work beside
// them goes on.
func entriesCases() []Case {
	return []Case{
		{Name: "entries-absent-names", Class: Direct, Summary: "the project's listing inside during a run and on the host after equals its listing before; each absent protected name (.mcp.json, .claude, .envrc, .vscode, .idea, .zed) stays unmade by O_CREAT, mkdir, mkfifo, symlink, link and rename, a directory moved in whole too; files and directories made, renamed and removed at the top, and a many-file extraction, reach the host",
			Run: func(h *H) {
				_, p := h.ws()
				h.Host("ws", "git", "init", "-q")
				h.Write("ws/a.txt", "a\n")
				before := listing(h, "ws")
				snap := h.Snapshot()
				o := h.Sandbox(p, `T="${TMPDIR:-/tmp}"
[ "$(LC_ALL=C ls -A | tr '\n' ' ')" = "`+before+`" ] && ok SAME_LISTING
echo x > .mcp.json && ok OPEN_CREAT
mkdir .claude && ok MKDIR
mkfifo .envrc && ok MKFIFO
ln -s a.txt .vscode && ok SYMLINK
ln a.txt .idea && ok LINK
echo z > z.tmp && ok Z; mv z.tmp .zed && ok RENAME; rm -f z.tmp
mkdir -p "$T/x/.claude/commands" && echo e > "$T/x/.claude/commands/evil.md" && ok TMP_TREE
mv "$T/x/.claude" . && ok MOVE_DIR_TOP
mkdir .claude-ok && echo w > .claude-ok/f && ok WORK_MKDIR
echo n > new.txt && mv new.txt renamed.txt && ok WORK_RENAME
echo g > gone.txt && rm gone.txt && mkdir gone.d && rmdir gone.d && ok WORK_REMOVE
mkdir -p "$T/pkg/lib" && i=0 && while [ $i -lt 300 ]; do echo $i > "$T/pkg/lib/f$i.js"; i=$((i+1)); done && tar -C "$T" -cf "$T/p.tar" pkg && mkdir node_modules && tar -xf "$T/p.tar" -C node_modules && ok WORK_EXTRACT`)
				h.Refuse(o, "OPEN_CREAT", "MKDIR", "MKFIFO", "SYMLINK", "LINK", "RENAME", "MOVE_DIR_TOP")
				h.Expect(o, "SAME_LISTING", "Z", "TMP_TREE", "WORK_MKDIR", "WORK_RENAME", "WORK_REMOVE", "WORK_EXTRACT")
				h.Want("ws/.claude-ok/f", "w\n")
				h.Want("ws/renamed.txt", "n\n")
				h.Want("ws/node_modules/pkg/lib/f299.js", "299\n")
				for _, n := range []string{".mcp.json", ".claude", ".envrc", ".vscode", ".idea", ".zed", "z.tmp", "gone.txt", "gone.d"} {
					h.Absent("ws/" + n)
				}
				h.Unchanged(snap, "ws/.claude-ok", "ws/renamed.txt", "ws/node_modules")
			}},
		{Name: "entries-deny-absent-parents", Class: Direct, Summary: "deny a path whose parents do not exist, beneath a directory the user may not write (a home the password database names that was never made): the launch works, the work in the workspace reaches the host, and nothing is made for the denied path",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("closed")
				p.Deny = append(p.Deny, h.Path("closed/home/x/.ssh"))
				if err := os.Chmod(h.Path("closed"), 0o555); err != nil {
					h.Fatalf("chmod: %v", err)
				}
				snap := h.Snapshot()
				o := h.Sandbox(p, `echo w > work.txt && ok WORK; mkdir -p "$C/home/x/.ssh" && ok MADE`, "C="+h.Path("closed"))
				h.Expect(o, "WORK")
				h.Refuse(o, "MADE")
				h.Want("ws/work.txt", "w\n")
				h.Absent("closed/home")
				h.Unchanged(snap, "ws/work.txt")
			}},
	}
}

// listing is the names in the directory rel on the host, sorted as ls
// sorts them in the C locale, each followed by a space.
func listing(h *H, rel string) string {
	es, err := os.ReadDir(h.Path(rel))
	if err != nil {
		h.Fatalf("list %s: %v", rel, err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return strings.Join(names, " ") + " "
}
