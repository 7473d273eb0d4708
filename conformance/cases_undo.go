package conformance

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// Class 7: undoing the sandbox — unmount, remount, nested user namespaces,
// capabilities, setuid binaries.
func undoCases() []Case {
	return []Case{
		{Name: "undo-umount-mask", Class: 7, Backends: linuxOnly, Summary: "unmount the mask over a denied directory and file (umount, umount -l, umount2)",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.Mkdir("ws/private")
				h.Write("ws/private/id", h.Secret)
				f := h.Write("ws/token", h.Secret)
				p.Deny = []string{d, f}
				o := h.Sandbox(p, `umount private && ok UMOUNT; umount -l private token && ok UMOUNT_LAZY; "$ATTACK" __attack umount "$PWD/private" "$PWD/token"; cat private/id token`)
				h.NoSecret(o)
				h.Refuse(o, "UMOUNT", "UMOUNT_LAZY")
			}},
		{Name: "undo-umount-readonly", Class: 7, Backends: linuxOnly, Summary: "unmount a read-only bind and write the file beneath",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Write("ws/ro.txt", "original\n"), h.Mkdir("ws/rodir")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `umount ro.txt && ok UMOUNT; "$ATTACK" __attack umount "$PWD/ro.txt" "$PWD/rodir"; echo pwn > ro.txt; echo x > rodir/new`)
				h.Refuse(o, "UMOUNT")
				h.Unchanged(snap)
			}},
		{Name: "undo-remount-rw", Class: 7, Backends: linuxOnly, Summary: "remount a read-only root and the denied mask read-write (mount -o remount, MS_REMOUNT)",
			Run: func(h *H) {
				_, p := h.ws()
				p.Readonly = []string{h.Mkdir("ws/ro")}
				h.Write("ws/ro/f", "original\n")
				p.Deny = []string{h.Mkdir("ws/private")}
				snap := h.Snapshot()
				o := h.Sandbox(p, `mount -o remount,rw ro && ok REMOUNT1; mount -o remount,bind,rw ro && ok REMOUNT2; mount -o remount,rw private && ok REMOUNT3; "$ATTACK" __attack remount "$PWD/ro" "$PWD/private" /; echo pwn > ro/f && ok WRITE; echo x > private/x && ok MASK`)
				h.Refuse(o, "REMOUNT1", "REMOUNT2", "REMOUNT3", "REMOUNT", "WRITE", "MASK")
				h.Unchanged(snap)
			}},
		{Name: "undo-nested-userns-unshare", Class: 7, Backends: linuxOnly, Needs: []string{"unshare"}, Summary: "unshare -U -m (-r), then unmount and remount the masks from the nested namespace",
			Run: func(h *H) {
				_, p := h.ws()
				h.deniedDir(&p, "ws/private")
				p.Readonly = []string{h.Write("ws/ro.txt", "original\n")}
				o := h.Sandbox(p, `A='echo "@@USER""NS@@"; umount private; umount -l private; umount ro.txt; mount -o remount,rw ro.txt; cat private/id; echo pwn > ro.txt'; unshare -U -m -r sh -c "$A" || unshare -U -m sh -c "$A"`)
				h.NoSecret(o)
				h.Want("ws/ro.txt", "original\n")
				h.Refuse(o, "USERNS")
			}},
		{Name: "undo-plant-setuid", Class: 7, Summary: "give a copy of a shell in the workspace the set-user-ID or set-group-ID bit (chmod 4755, u+s, g+s, install -m 4755, open and mknod with the mode, fchmod): after the sandbox, any local user would run it as the file's owner (as root: a root shell)",
			Run: func(h *H) {
				_, p := h.ws()
				h.Mkdir("ws/src")
				o := h.Sandbox(p, `cd src || exit 1
cp /bin/sh s1 && ok COPY
chmod 4755 s1 && ok CHMOD; chmod u+s s1 && ok CHMOD_U; chmod g+s s1 && ok CHMOD_G
install -m 4755 /bin/sh s2 2>/dev/null && ok INSTALL
if command -v python3 >/dev/null; then
python3 -c 'import os; os.close(os.open("s3", os.O_CREAT|os.O_WRONLY, 0o4755))' 2>/dev/null && ok OPEN
python3 -c 'import os, stat; os.mknod("s4", stat.S_IFREG|0o6755)' 2>/dev/null && ok MKNOD
python3 -c 'import os; f=os.open("s1", os.O_RDONLY); os.fchmod(f, 0o4755)' 2>/dev/null && ok FCHMOD
fi
chmod 700 s1 && ok PLAIN`)
				h.Expect(o, "COPY", "PLAIN")
				h.Refuse(o, "CHMOD", "CHMOD_U", "CHMOD_G", "INSTALL", "OPEN", "MKNOD", "FCHMOD")
				filepath.WalkDir(h.Path("ws"), func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return nil
					}
					if fi, err := os.Lstat(p); err == nil && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
						h.Errorf("host: %s is %v: a set-user-ID or set-group-ID file the sandbox made", p, fi.Mode())
					}
					return nil
				})
			}},
		{Name: "undo-nested-userns-syscall", Class: 7, Backends: linuxOnly, Summary: "clone a nested user+mount namespace mapped to root (cordon __attack userns), then unmount",
			Run: func(h *H) {
				_, p := h.ws()
				h.deniedDir(&p, "ws/private")
				o := h.Sandbox(p, `"$ATTACK" __attack userns /bin/sh -c '"$ATTACK" __attack umount "$PWD/private"; cat private/id'`)
				h.NoSecret(o)
				h.Refuse(o, "USERNS", "UMOUNT")
			}},
		{Name: "undo-capabilities", Class: 7, Backends: linuxOnly, Summary: "no capability is effective, permitted, ambient or inheritable, in the command and in the sandbox's pid 1; no_new_privs is set",
			Run: func(h *H) {
				_, p := h.ws()
				script := `grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status | sed 's/^/self /'`
				if h.Backend() != "landlock" {
					// The landlock backend has no pid namespace, so no pid
					// 1 of its own: /proc/1 is the host's init.
					script += `; grep -E '^Cap(Prm|Eff):' /proc/1/status | sed 's/^/init /'`
				}
				o := h.Sandbox(p, script)
				re := regexp.MustCompile(`(?m)^(self|init) (Cap\w+|NoNewPrivs):\s+(\w+)$`)
				seen := 0
				for _, m := range re.FindAllStringSubmatch(o.Stdout, -1) {
					seen++
					if m[2] == "NoNewPrivs" {
						if h.Backend() != "seatbelt" && m[3] != "1" {
							h.Errorf("no_new_privs is not set in the sandbox")
						}
						continue
					}
					if strings.Trim(m[3], "0") != "" {
						h.Errorf("%s %s = %s: capabilities survive in the sandbox", m[1], m[2], m[3])
					}
				}
				if seen < 5 {
					h.Errorf("could not read the capability sets:\n%s", o)
				}
			}},
		{Name: "undo-runtime-state", Class: 7, Backends: linuxOnly, Summary: "without restrictWrites, forge masks set aside for removal in cordon's runtime directory (links to a read-only directory and a denied file) so the next launch's tidy deletes them",
			Run: func(h *H) {
				ro := h.Write("ro.lock", "")
				rodir := h.Mkdir("rodir")
				den := h.Write("denied.lock", "")
				h.Mkdir("later")
				snap := h.Snapshot()
				rt := filepath.Join(state.PathFor(h.User.Uid), state.Run)
				o := h.Sandbox(Policy{Readonly: []string{ro, rodir}, Deny: []string{den}},
					`mkdir -p "$RT/masks" 2>/dev/null; ln -s "$D" "$RT/masks/.gone-a" && ln -s "$F" "$RT/masks/.gone-b" && ok FORGED`,
					"RT="+rt, "D="+rodir, "F="+den)
				// A later launch of this user with a denied directory tidies
				// the masks.
				h.Sandbox(Policy{Deny: []string{h.Path("later")}}, `true`)
				// Tampering with $RT/empty (the file bound over denied files)
				// works the same way, but would disturb every concurrent
				// sandbox of this user, other tests included: FINDINGS F2.
				h.Refuse(o, "FORGED")
				h.Unchanged(snap)
			}},
		{Name: "undo-stall-launches", Class: 7, Backends: linuxOnly, Summary: "hold a lock of cordon's state from inside (a private TMPDIR's, which the tidy takes), so later launches of this user wait for the sandbox to end",
			Run: func(h *H) {
				_, p := h.ws()
				rt := filepath.Join(state.PathFor(h.User.Uid), state.Tmp)
				o := h.Sandbox(p, `for f in "$RT"/.*.lock; do cat "$f" >/dev/null 2>&1 && ok OPENED; done; ls -A "$RT" 2>/dev/null | grep -q . && ok LISTED`, "RT="+rt)
				h.Refuse(o, "OPENED", "LISTED")
			}},
		{Name: "undo-setuid-binary", Class: 7, Users: UnprivilegedOnly, Summary: "a root-owned setuid copy of bash must not make an unprivileged user root inside",
			RootHarness: "only root can make a setuid-root copy",
			Run: func(h *H) {
				_, p := h.ws()
				bash, err := exec.LookPath("bash")
				if err != nil {
					h.NotApplicable("needs bash")
				}
				b, err := os.ReadFile(bash)
				if err != nil {
					h.Fatalf("fixture: %v", err)
				}
				h.WriteMode("suid/bash", string(b), 0o755)
				if err := os.Chmod(h.Path("suid/bash"), 0o4755|os.ModeSetuid); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				os.Chmod(h.Path("suid/bash"), os.ModeSetuid|0o755)
				h.KeepOwner("suid/bash")
				h.handOver()
				// Control: outside the sandbox the copy does make the user root;
				// on a nosuid filesystem the case proves nothing.
				ctl := exec.Command(h.Path("suid/bash"), "-p", "-c", "id -u")
				ctl.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(h.User.Uid), Gid: uint32(h.User.Gid), Groups: []uint32{}}}
				if out, err := ctl.Output(); err != nil || strings.TrimSpace(string(out)) != "0" {
					h.NotApplicable("the fixture's filesystem ignores setuid bits (control gave %q, %v)", out, err)
				}
				o := h.Sandbox(p, `u=$("$FIX/suid/bash" -p -c 'id -u'); echo "uid=$u"; [ "$u" = 0 ] && ok ROOT; "$FIX/suid/bash" -p -c 'cat /proc/self/status' | grep -E '^(Uid|CapEff)'`)
				h.Refuse(o, "ROOT")
				if !strings.Contains(o.Stdout, "uid=") {
					h.Errorf("the setuid copy did not run:\n%s", o)
				}
			}},
	}
}
