package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// dataVolume is where an APFS system keeps user files; through its
// firmlinks /Users/x, /private/tmp/x and friends have a second spelling
// under it.
const dataVolume = "/System/Volumes/Data"

// seatbeltOnly marks cases about how Seatbelt matches paths: it compares
// the resolved path string, so spellings the kernel folds together are
// where a profile that forgot one would leak.
var seatbeltOnly = []string{"seatbelt"}

// otherSpelling returns the same macOS path through or without the
// /private firmlink (/tmp, /var and /etc are links into /private).
func otherSpelling(p string) (string, bool) {
	for _, top := range []string{"/tmp/", "/var/", "/etc/"} {
		if strings.HasPrefix(p, "/private"+top) {
			return strings.TrimPrefix(p, "/private"), true
		}
		if strings.HasPrefix(p, top) {
			return "/private" + p, true
		}
	}
	return "", false
}

// seatbeltCases are escape attempts that only make sense against Seatbelt.
func seatbeltCases() []Case {
	return []Case{
		{Name: "firmlink-spellings", Class: 2, Backends: seatbeltOnly,
			Summary: "read and write a denied file through the other spelling of the /private firmlink",
			Run:     firmlinkSpellings},
		{Name: "firmlink-readonly-dir", Class: 1, Backends: seatbeltOnly,
			Summary: "create files in a read-only directory through the other spelling of the /private firmlink",
			Run:     firmlinkReadonlyDir},
		{Name: "launchd-escape", Class: 7, Backends: seatbeltOnly,
			Summary: "start a process outside the sandbox through launchd, LaunchServices or an Apple Event, and have it write outside",
			Run:     launchdEscape},
		// The SBPL evaluator's side of the next three runs on every OS:
		// seatbelt.TestDataVolumeSpelling, TestRenamedSymlinkOntoAncestor
		// and TestServiceDenialsIgnorePath.
		{Name: "data-volume-spelling", Class: Symlink, Backends: seatbeltOnly,
			Summary: "read a denied file and write a read-only one through their /System/Volumes/Data spelling",
			Run:     dataVolumeSpelling},
		{Name: "rename-symlink-onto-ancestor", Class: Move, Backends: seatbeltOnly,
			Summary: "make a link elsewhere and rename it onto the missing parent of a read-only path, then write through it",
			Run:     renameSymlinkOntoAncestor},
		{Name: "launchservices-copy", Class: Undo, Backends: seatbeltOnly,
			Summary: "run copies of open and osascript under other names, to start a process outside the sandbox",
			Run:     launchservicesCopy},
		{Name: "user-temp-folder", Class: HostTools, Backends: seatbeltOnly,
			Summary: "the workspace preset opens the user's temp folder (/private/var/folders/…/T) for xcrun and clang: replace xcrun's cache of tool paths there, write the sibling 0 folder",
			Run:     userTempFolder},
	}
}

func firmlinkSpellings(h *H) {
	_, p := h.ws()
	t := h.Write("outside/secret", h.Secret)
	alt, ok := otherSpelling(t)
	if !ok {
		h.NotApplicable("fixture %s is not under /tmp, /var or /etc", t)
	}
	p.Deny = []string{alt} // the policy names one spelling...
	o := h.Sandbox(p, `cat "$A" "$B"; echo pwn >> "$A" && ok WRITE_A; echo pwn >> "$B" && ok WRITE_B`, "A="+t, "B="+alt)
	h.NoSecret(o) // ...both are denied
	h.Refuse(o, "WRITE_A", "WRITE_B")
	h.Want("outside/secret", h.Secret)
}

func firmlinkReadonlyDir(h *H) {
	_, p := h.ws()
	d := h.Mkdir("ws/ro")
	alt, ok := otherSpelling(d)
	if !ok {
		h.NotApplicable("fixture %s is not under /tmp, /var or /etc", d)
	}
	p.Readonly = []string{d}
	o := h.Sandbox(p, `echo x > "$A/new" && ok CREATE_A; echo x > "$B/new2" && ok CREATE_B`, "A="+d, "B="+alt)
	h.Refuse(o, "CREATE_A", "CREATE_B")
	h.Absent("ws/ro/new")
	h.Absent("ws/ro/new2")
}

func launchdEscape(h *H) {
	_, p := h.ws()
	h.Mkdir("outside")
	label := "org.cordon.escape." + h.Secret[len(h.Secret)-12:]
	h.Cleanup(func() { exec.Command("/bin/launchctl", "remove", label).Run() })
	o := h.Sandbox(p, launchdAttempts, "O="+h.Path("outside"), "L="+label)
	h.Refuse(o, "SUBMIT", "OPEN", "APPLEEVENT")
	h.neverAppear("outside/by-launchd", "outside/by-open", "outside/by-appleevent")
}

func dataVolumeSpelling(h *H) {
	w, p := h.ws()
	secret := h.Write("outside/secret", h.Secret)
	h.Write("ws/ro.txt", "keep")
	if _, err := os.Stat(dataVolume + secret); err != nil {
		h.NotApplicable("no data-volume spelling of %s here: %v", secret, err)
	}
	p.Deny = []string{h.Path("outside")}
	p.Readonly = []string{h.Path("ws/ro.txt")}
	o := h.Sandbox(p, `cat "$D$S"; ls "$D$O"; echo pwn >> "$D$R" && ok WRITE; mv "$D$R" "$D$W/moved" && ok MOVE; echo x > "$D$O/new" && ok CREATE`,
		"D="+dataVolume, "S="+secret, "O="+h.Path("outside"), "R="+h.Path("ws/ro.txt"), "W="+w)
	h.NoSecret(o)
	h.Refuse(o, "WRITE", "MOVE", "CREATE")
	h.Want("ws/ro.txt", "keep")
	h.Want("outside/secret", h.Secret)
	h.Absent("outside/new")
}

func renameSymlinkOntoAncestor(h *H) {
	_, p := h.ws()
	p.Readonly = []string{h.Path("ws/a/b/hooks")}
	o := h.Sandbox(p, `mkdir -p "$TMPDIR/evil/b/hooks" && ln -s "$TMPDIR/evil" l && ok LINK
mv l a && ok RENAME
ln -s "$TMPDIR/evil" a && ok SYMLINK
echo pwn > a/b/hooks/pre-commit && ok WRITE
mkdir -p a/b && ok MKDIR
true`)
	h.Expect(o, "LINK", "MKDIR") // making a link elsewhere, and the real directories, is work
	h.Refuse(o, "RENAME", "SYMLINK", "WRITE")
	if fi, err := os.Lstat(h.Path("ws/a")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		h.Errorf("host: %s is a symbolic link", h.Path("ws/a"))
	}
	h.Absent("ws/a/b/hooks/pre-commit")
}

func launchservicesCopy(h *H) {
	_, p := h.ws()
	h.Mkdir("outside")
	o := h.Sandbox(p, `cp /usr/bin/open "$TMPDIR/xo" && cp /usr/bin/osascript "$TMPDIR/xs" && ok COPY
printf '#!/bin/sh\ntouch "%s/by-open"\n' "$O" > "$TMPDIR/x.command" && chmod +x "$TMPDIR/x.command"
"$TMPDIR/xo" "$TMPDIR/x.command" && ok OPEN
"$TMPDIR/xo" -a Terminal "$TMPDIR/x.command" && ok OPEN_APP
"$TMPDIR/xs" -e "tell application \"Terminal\" to do script \"touch $O/by-appleevent\"" && ok APPLEEVENT
true`, "O="+h.Path("outside"))
	h.Expect(o, "COPY")
	h.Refuse(o, "OPEN", "OPEN_APP", "APPLEEVENT")
	h.neverAppear("outside/by-open", "outside/by-appleevent")
}

func userTempFolder(h *H) {
	out, err := exec.Command("/usr/bin/getconf", "DARWIN_USER_TEMP_DIR").Output()
	t := strings.TrimRight(strings.TrimSpace(string(out)), "/")
	if err != nil || t == "" {
		h.NotApplicable("getconf DARWIN_USER_TEMP_DIR: %v", err)
	}
	if r, err := filepath.EvalSymlinks(t); err == nil {
		t = r
	}
	db := filepath.Join(t, "xcrun_db")
	before, had := h.Read(db)
	h.Cleanup(func() { // put the host's cache back if the attack got through
		if now, ok := h.Read(db); ok != had || now != before {
			if had {
				os.WriteFile(db, []byte(before), 0o644)
			} else {
				os.Remove(db)
			}
		}
	})
	zero := filepath.Join(filepath.Dir(t), "0", "cordon-case-"+h.Secret[len(h.Secret)-8:])
	mine := filepath.Join(t, "cordon-case-"+h.Secret[len(h.Secret)-8:])
	h.Cleanup(func() { os.Remove(mine); os.Remove(zero); os.Remove(db + ".new") })
	_, p := h.ws()
	o := h.Sandbox(p, `echo x > "$MINE" && ok TEMP
printf pwn > "$T/xcrun_db.new" && mv -f "$T/xcrun_db.new" "$T/xcrun_db" && ok RENAME_DB
printf pwn > "$T/xcrun_db" && ok WRITE_DB
mv "$T" "$T.old" && ok MOVE_T
echo x > "$ZERO" && ok ZERO
true`, "T="+t, "MINE="+mine, "ZERO="+zero)
	h.Expect(o, "TEMP") // the decision: tools that ignore TMPDIR can write there
	h.Refuse(o, "RENAME_DB", "WRITE_DB", "MOVE_T", "ZERO")
	if now, ok := h.Read(db); ok != had || now != before {
		h.Errorf("host: %s changed", db)
	}
	h.Absent(zero)
	if _, err := os.Stat(t); err != nil {
		h.Errorf("host: %s: %v", t, err)
	}
}

// neverAppear checks that none of the files rels appears outside: what a
// system service was asked to run would run a moment later, outside the
// sandbox, so it gives them three seconds.
func (h *H) neverAppear(rels ...string) {
	for range 30 {
		if slices.ContainsFunc(rels, h.Exists) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, r := range rels {
		h.Absent(r)
	}
}

// launchdAttempts asks three system services to run a command for the
// sandbox: launchd (a submitted job), LaunchServices (open runs a .command
// file in Terminal) and Terminal through an Apple Event. Each would run
// outside any profile.
const launchdAttempts = `printf '#!/bin/sh\ntouch "%s/by-open"\n' "$O" > "$TMPDIR/x.command"
chmod +x "$TMPDIR/x.command"
/bin/launchctl submit -l "$L" -- /usr/bin/touch "$O/by-launchd" && ok SUBMIT
/usr/bin/open "$TMPDIR/x.command" && ok OPEN
/usr/bin/osascript -e "tell application \"Terminal\" to do script \"touch $O/by-appleevent\"" && ok APPLEEVENT
true`
