package conformance

import "strings"

// movedInCases: a directory built elsewhere (in TMPDIR) and renamed into
// the workspace is judged by every name it brings (gate.brings), by the
// same model that decides each name made in place (docs/threat-model.md,
// class 5).
func movedInCases() []Case {
	return []Case{
		{Name: "entries-tree-moved-in", Class: NotYet, Needs: []string{"git"},
			Summary: "trees built in TMPDIR carrying .claude/commands/evil.md, .vscode/tasks.json and .git/hooks/post-checkout, renamed onto those absent names at the workspace's top with rename(2) from the workspace itself (from TMPDIR, another mount on native and bwrap, it answers EXDEV) and with mv from TMPDIR, and a hook moved into a nested repository's .git: refused and absent on the host; a tree that becomes a new nested repository with its own .git hooks and .claude moved into a plain subdirectory is allowed as making the same names one by one is, and the next launch keeps both read-only and names the configuration that appeared; a plain source tree renamed in and one moved from TMPDIR reach the host",
			Run:     func(h *H) { h.treeMovedIn() }},
	}
}

// movedTrees builds the trees in TMPDIR: x carries .claude, v .vscode,
// g .git with a hook, r a repository with a hook and .claude, plain none.
// The case builds x, v, g and a plain tree in the workspace too: from
// TMPDIR, another mount on native and bwrap, rename(2) answers EXDEV
// before any gate, and only mv's copy, name by name, meets it.
const movedTrees = `T="${TMPDIR:-/tmp}"
mkdir -p "$T/x/.claude/commands" "$T/v/.vscode" "$T/g/.git/hooks" "$T/plain/src/pkg" &&
echo evil > "$T/x/.claude/commands/evil.md" && echo '{}' > "$T/v/.vscode/tasks.json" &&
printf '#!/bin/sh\necho ran > "$FIX/ran"\n' > "$T/g/.git/hooks/post-checkout" && chmod +x "$T/g/.git/hooks/post-checkout" &&
git init -q "$T/r" && cp "$T/g/.git/hooks/post-checkout" "$T/r/.git/hooks/" && cp -R "$T/x/.claude" "$T/r/" &&
echo 'package pkg' > "$T/plain/src/pkg/a.go" && echo m > "$T/plain/README" && ok TREES
`

// treeMovedIn moves trees into a workspace without a .git of its own
// (so .git is an absent protected name at its top) that holds a nested
// repository, then launches again to try to change what came in.
func (h *H) treeMovedIn() {
	_, p := h.ws()
	h.Write("ws/a.txt", "a\n")
	h.Mkdir("ws/vendor/lib")
	h.Host("ws/vendor/lib", "git", "init", "-q")
	snap := h.Snapshot()
	o := h.Sandbox(p, movedTrees+`mkdir -p build/x/.claude/commands build/v/.vscode build/g/.git/hooks build/plain/src &&
echo evil > build/x/.claude/commands/evil.md && echo '{}' > build/v/.vscode/tasks.json &&
cp "$T/g/.git/hooks/post-checkout" build/g/.git/hooks/ && echo 'package src' > build/plain/src/b.go && ok BUILD
for n in x/.claude v/.vscode g/.git; do
  "$ATTACK" __attack rename "build/$n" "${n#*/}" && ok "RENAME_IN_${n#*/}"
done
"$ATTACK" __attack rename build/plain moved-in && ok RENAME_IN_PLAIN
for n in x/.claude v/.vscode g/.git; do
  t=${n#*/}
  "$ATTACK" __attack rename "$T/$n" "$t" && ok "RENAME_$t"
  mv "$T/$n" "$t" && ok "MV_$t"
done
mv "$T/g/.git/hooks/post-checkout" vendor/lib/.git/hooks/ && ok MV_NESTED_HOOK
mv "$T/r" sub && ok MV_NEW_REPO
mkdir -p one/.claude/commands one/.git/hooks && ok ONE_BY_ONE
mv "$T/plain" moved && ok MV_PLAIN
cat moved/src/pkg/a.go >/dev/null && ok READ_PLAIN`, "FIX="+h.Dir)
	h.Expect(o, "TREES", "MV_NEW_REPO", "ONE_BY_ONE", "MV_PLAIN", "READ_PLAIN", "BUILD", "RENAME_IN_PLAIN")
	h.Refuse(o, "RENAME_.claude", "MV_.claude", "RENAME_.vscode", "MV_.vscode", "RENAME_.git", "MV_.git", "MV_NESTED_HOOK",
		"RENAME_IN_.claude", "RENAME_IN_.vscode", "RENAME_IN_.git")
	for _, n := range []string{".claude", ".vscode", ".git", "vendor/lib/.git/hooks/post-checkout", "ran"} {
		h.Absent("ws/" + n)
	}
	h.Absent("ran")
	h.Want("ws/moved/src/pkg/a.go", "package pkg\n")
	h.Want("ws/moved/README", "m\n")
	h.Want("ws/moved-in/src/b.go", "package src\n")
	h.Want("ws/build/x/.claude/commands/evil.md", "evil\n")
	h.Want("ws/sub/.claude/commands/evil.md", "evil\n")
	h.Unchanged(snap, "ws/moved", "ws/moved-in", "ws/build", "ws/sub", "ws/one")
	// The second turn: what the first launch brought in is a nested
	// repository and agents' configuration now, which the next launch
	// finds, keeps read-only and names; the work beside it goes on.
	hook, _ := h.Read("ws/sub/.git/hooks/post-checkout")
	o = h.Sandbox(p, `echo planted >> sub/.claude/commands/evil.md && ok WRITE_CLAUDE
mkdir sub/.claude/agents && ok MKDIR_CLAUDE
echo planted >> sub/.git/hooks/post-checkout && ok WRITE_HOOK
echo w >> moved/README && ok WORK`)
	h.Refuse(o, "WRITE_CLAUDE", "MKDIR_CLAUDE", "WRITE_HOOK")
	if !strings.Contains(o.Stderr, "configuration appeared") || !strings.Contains(o.Stderr, "sub/.claude") {
		h.Errorf("the next launch did not name the configuration that appeared in sub:\n%s", o)
	}
	h.Expect(o, "WORK")
	h.Want("ws/sub/.claude/commands/evil.md", "evil\n")
	h.Want("ws/sub/.git/hooks/post-checkout", hook)
	h.Absent("ws/sub/.claude/agents")
	h.Want("ws/moved/README", "m\nw\n")
}
