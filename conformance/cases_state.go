package conformance

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/workspace"
)

// Classes 11 and 14 for cordon's own state: what a later launch reads
// (the detection verdict, the scan cache, masks) lives
// in one per-user state directory that every sandbox has denied, and what
// a sandbox can still touch (its own TMPDIR) must not make a later launch
// fail. Each attack is followed by a victim launch, judged by the host.
func stateCases() []Case {
	return []Case{
		{Name: "cross-state-dir-open-mode", Class: CrossLaunch, Summary: "in open mode, poison cordon's state (a detection verdict saying nested, the scan cache, the runtime directory) or move it away; the next launch must still be sandboxed",
			Run: func(h *H) {
				sd := state.PathFor(h.User.Uid)
				_, runErr := os.Stat(filepath.Join(sd, state.Run))
				before := map[string]os.FileInfo{}
				for _, d := range []string{sd, filepath.Dir(sd)} {
					if fi, err := os.Lstat(d); err == nil {
						before[d] = fi
					}
				}
				ro := h.Write("ro/keep", "original\n")
				verdict := `{"key":{},"result":{"backend":"bwrap","usable":true,"nested":true}}`
				o := h.Sandbox(Policy{},
					`printf '%s' "$V" > "$S/detect-bwrap.json" && ok VERDICT
printf '%s' "$V" > "$S/detect-seatbelt.json" && ok VERDICT2
ls "$S" >/dev/null 2>&1 && ok LIST
mkdir -p "$S/scan/x" && ok SCAN
rm -rf "$S/run" 2>/dev/null
mv "$S" "$S.moved" 2>/dev/null && ok MOVE
mv "$(dirname "$S")" "$(dirname "$S").moved" 2>/dev/null && ok MOVEPARENT
chmod 777 "$S" 2>/dev/null && ok CHMOD`,
					"S="+sd, "V="+verdict)
				h.Refuse(o, "VERDICT", "VERDICT2", "LIST", "SCAN", "MOVE", "MOVEPARENT", "CHMOD")
				if _, err := os.Stat(filepath.Join(sd, state.Run)); runErr == nil && err != nil {
					h.Errorf("host: cordon's runtime directory is gone: %v", err)
				}
				for _, d := range []string{sd, filepath.Dir(sd)} {
					// Judged by the place itself: in open mode the sandbox
					// may make "$S.moved" beside it (mv copies when the
					// rename is refused with EXDEV, as Landlock refuses a
					// rename it may not refer), but the directory must
					// stay where it was, the same one.
					if fi, err := os.Lstat(d); before[d] != nil && (err != nil || !os.SameFile(fi, before[d])) {
						os.Rename(d+".moved", d) // put it back for the cases that follow
						h.Errorf("host: %s was moved away", d)
					}
					os.RemoveAll(d + ".moved")
				}
				// The victim: a later launch must be confined (the harness
				// fails a script that runs without CORDON_SANDBOX) and the
				// read-only root must hold.
				v := h.Sandbox(Policy{Readonly: []string{filepath.Dir(ro)}}, `echo pwned > "$R" && ok WROTE`, "R="+ro)
				h.Refuse(v, "WROTE")
				h.Want("ro/keep", "original\n")
			}},
		{Name: "cross-state-dir-writable-parent", Class: CrossLaunch, Summary: "with the state directory's parent given as a writable root (a build that wants ~/.local writable), write a verdict there",
			Run: func(h *H) {
				sd := state.PathFor(h.User.Uid)
				if filepath.Dir(sd) == "/tmp" {
					h.NotApplicable("%s's state directory is %s, right in /tmp (no home directory, or CORDON_STATE_DIR says so); a writable /tmp is open mode, which cross-state-dir-open-mode covers", h.User.Name, sd)
				}
				_, p := h.ws()
				p.Writable = []string{filepath.Dir(sd)}
				o := h.Sandbox(p, `echo '{}' > "$S/detect-bwrap.json" && ok VERDICT; touch "$S/new" && ok CREATE; ls "$S" >/dev/null 2>&1 && ok LIST; mv "$S" "$S.moved" 2>/dev/null && ok MOVE`, "S="+sd)
				h.Refuse(o, "VERDICT", "CREATE", "LIST", "MOVE")
				if _, err := os.Lstat(filepath.Join(sd, "new")); err == nil {
					os.Remove(filepath.Join(sd, "new"))
					h.Errorf("host: the sandbox created a file in %s", sd)
				}
			}},
		{Name: "dos-tmpdir-mode", Class: DoS, Summary: "loosen, then remove every permission of, the sandbox's own TMPDIR; the next launch must still start and find it private",
			Run: func(h *H) {
				_, p := h.ws()
				o := h.Sandbox(p, `chmod 755 "$TMPDIR" && ok LOOSEN`)
				h.Expect(o, "LOOSEN") // its own directory: allowed, and harmless
				v := h.Sandbox(p, `[ -w "$TMPDIR" ] && ok WRITABLE; chmod 000 "$TMPDIR" && ok LOCK`)
				h.Expect(v, "WRITABLE")
				w := h.Sandbox(p, `mktemp >/dev/null && ok MKTEMP`)
				h.Expect(w, "MKTEMP")
				tmp, err := stateTmpDir(h, p)
				if err != nil {
					h.Fatalf("%v", err)
				}
				if fi, err := os.Lstat(tmp); err != nil || fi.Mode().Perm() != 0o700 {
					h.Errorf("host: the private TMPDIR %s is not 0700 after the next launch (%v)", tmp, err)
				}
			}},
		{Name: "dos-squat-tmp", Class: DoS, Summary: "another local user creates /tmp/cordon-<uid> first (where cordon once kept its state); launches must still work",
			RootHarness: "only root can make a directory owned by another user",
			Run: func(h *H) {
				squat := filepath.Join("/tmp", "cordon-"+strconv.Itoa(h.User.Uid))
				if state.PathFor(h.User.Uid) == squat {
					h.NotApplicable("%s's state directory is %s, right in /tmp (no home directory, or CORDON_STATE_DIR says so), where a squat is refused with the fix (docs/threat-model.md)", h.User.Name, squat)
				}
				if err := os.Mkdir(squat, 0o755); err != nil {
					h.NotApplicable("%s exists already (%v); the case needs to create it", squat, err)
				}
				h.Cleanup(func() { os.Remove(squat) })
				if err := os.Chown(squat, 65534, 65534); err != nil {
					h.Fatalf("fixture: chown %s: %v", squat, err)
				}
				_, p := h.ws()
				o := h.Sandbox(p, `mktemp >/dev/null && ok MKTEMP`)
				h.Expect(o, "MKTEMP")
			}},
	}
}

// stateTmpDir is the private TMPDIR the workspace preset gives p's
// workspace when the case's user launches it.
func stateTmpDir(h *H, p Policy) (string, error) {
	comp, err := workspace.Compose(p.Spec(h.env(nil), h.Attack()))
	if err != nil {
		return "", err
	}
	return filepath.Join(state.PathFor(h.User.Uid), state.Tmp, filepath.Base(comp.TmpDir)), nil
}
