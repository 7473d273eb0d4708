package conformance

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Metadata changes: chmod, chown, extended attributes and file times of
// what the sandbox may not write. The sandbox runs as the files' owner, so
// the kernel's ordinary checks allow each of these: only the backend
// refuses them (bwrap and native by read-only mounts, EROFS; the landlock
// backend, which Landlock does not cover here, by its metadata gate).
// Judged on the host: the mode, owner, attributes and times afterwards.
func metaCases() []Case {
	return []Case{
		{Name: "meta-chmod-readonly", Class: Direct, Summary: "chmod a file and a directory in a read-only root the sandbox's user owns",
			Run: func(h *H) {
				_, p := h.ws()
				h.readonlyDir(&p)
				snap := h.Snapshot()
				o := h.Sandbox(p, `chmod 666 ro/f && ok CHMOD; chmod 000 ro/f && ok CHMOD0; chmod 777 ro && ok CHMODDIR; chmod 000 ro && ok CHMODDIR0`)
				h.Refuse(o, "CHMOD", "CHMOD0", "CHMODDIR", "CHMODDIR0")
				h.Unchanged(snap)
			}},
		{Name: "meta-chmod-denied", Class: Direct, Summary: "chmod a denied directory and the file in it",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.deniedDir(&p, "ws/private")
				snap := h.Snapshot()
				o := h.Sandbox(p, `chmod 644 "$D/id" && ok CHMOD; chmod 755 "$D" && ok CHMODDIR; chmod 000 "$D" && ok CHMODDIR0`, "D="+d)
				h.Refuse(o, "CHMOD", "CHMODDIR", "CHMODDIR0")
				h.Unchanged(snap)
			}},
		{Name: "meta-chmod-outside", Class: Direct, Summary: "chmod a host file and directory outside the roots: make a key world-readable, lock the user out",
			Run: func(h *H) {
				_, p := h.ws()
				h.WriteMode("outside/id_ed25519", "key\n", 0o600)
				h.Write("outside/notes", "mine\n")
				snap := h.Snapshot()
				o := h.Sandbox(p, `chmod 644 "$FIX/outside/id_ed25519" && ok CHMOD; chmod 000 ../outside/notes && ok CHMOD0; chmod 700 "$FIX/outside" && ok CHMODDIR; chmod 755 "$FIX" && ok CHMODFIX`)
				h.Refuse(o, "CHMOD", "CHMOD0", "CHMODDIR", "CHMODFIX")
				h.Unchanged(snap, "ws")
			}},
		{Name: "meta-chmod-hook", Class: Direct, Summary: "chmod +x a hook the repository keeps unexecutable in .git/hooks",
			Run: func(h *H) {
				_, p := h.ws()
				h.Write("ws/.git/hooks/pre-commit", "#!/bin/sh\necho pwned\n")
				snap := h.Snapshot()
				o := h.Sandbox(p, `chmod +x .git/hooks/pre-commit && ok CHMOD; chmod 755 .git/hooks/pre-commit && ok CHMOD755; chmod 777 .git/hooks && ok CHMODDIR`)
				h.Refuse(o, "CHMOD", "CHMOD755", "CHMODDIR")
				h.Unchanged(snap)
			}},
		{Name: "meta-chown", Class: Direct, Summary: "chgrp a host file outside the roots that the user owns to the user's own group",
			Run: func(h *H) {
				_, p := h.ws()
				f := h.Write("outside/f", "mine\n")
				// Owned by the user with another group: the owner may give
				// it its own group, a change the kernel allows. A harness
				// that is not root (verify run by a user, or inside a user
				// namespace where 12345 is unmapped) cannot set another
				// group: the file keeps the user's, and the sandbox's
				// chgrp to it, a change in name only, must still fail.
				h.KeepOwner("outside/f")
				_ = os.Lchown(f, h.User.Uid, 12345)
				snap := h.Snapshot()
				o := h.Sandbox(p, `chgrp "$(id -g)" "$F" && ok CHGRP; chown "$(id -u):$(id -g)" "$F" && ok CHOWN`, "F="+f)
				h.Refuse(o, "CHGRP", "CHOWN")
				h.Unchanged(snap, "ws")
			}},
		{Name: "meta-setxattr", Class: Direct, Summary: "set and remove user.* extended attributes on a host file outside the roots and in a read-only root",
			Run: func(h *H) {
				_, p := h.ws()
				out := h.Write("outside/f", "mine\n")
				h.readonlyDir(&p)
				ro := h.Path("ws/ro/f")
				if err := unix.Setxattr(out, "user.cordon-keep", []byte("1"), 0); err != nil {
					h.NotApplicable("this file system has no user extended attributes: %v", err)
				}
				o := h.Sandbox(p, `"$ATTACK" __attack setxattr "$O" user.cordon-meta; "$ATTACK" __attack setxattr ro/f user.cordon-meta; "$ATTACK" __attack removexattr "$O" user.cordon-keep`, "O="+out)
				h.Refuse(o, "SETXATTR", "REMOVEXATTR")
				for _, f := range []string{out, ro} {
					if _, err := unix.Getxattr(f, "user.cordon-meta", nil); !errors.Is(err, unix.ENODATA) {
						h.Errorf("host: %s has user.cordon-meta (%v)", f, err)
					}
				}
				if _, err := unix.Getxattr(out, "user.cordon-keep", nil); err != nil {
					h.Errorf("host: user.cordon-keep of %s is gone: %v", out, err)
				}
			}},
		{Name: "meta-utimes", Class: Direct, Summary: "set explicit times (backdate) on a host file outside the roots and a read-only one",
			Run: func(h *H) {
				_, p := h.ws()
				out := h.Write("outside/f", "mine\n")
				h.readonlyDir(&p)
				ro := h.Path("ws/ro/f")
				before := map[string]time.Time{out: mtime(h, out), ro: mtime(h, ro)}
				o := h.Sandbox(p, `touch -d 2001-01-01 "$O" && ok TOUCH; touch -m -d 2001-01-01 ro/f && ok TOUCHRO; touch "$O" && ok TOUCHNOW`, "O="+out)
				h.Refuse(o, "TOUCH", "TOUCHRO", "TOUCHNOW")
				for f, t := range before {
					if now := mtime(h, f); !now.Equal(t) {
						h.Errorf("host: the time of %s changed from %v to %v", f, t, now)
					}
				}
			}},
		{Name: "meta-symlink-out", Class: Direct, Summary: "a link in the workspace to a host file outside; chmod and touch through it",
			Run: func(h *H) {
				_, p := h.ws()
				f := h.WriteMode("outside/id_ed25519", "key\n", 0o600)
				h.Symlink(f, "ws/link")
				h.Symlink(h.Path("outside"), "ws/dirlink")
				before := mtime(h, f)
				snap := h.Snapshot()
				o := h.Sandbox(p, `chmod 644 link && ok CHMOD; chmod 777 dirlink/ && ok CHMODDIR; chmod 644 dirlink/id_ed25519 && ok CHMODVIA; touch -d 2001-01-01 link && ok TOUCH`)
				h.Refuse(o, "CHMOD", "CHMODDIR", "CHMODVIA", "TOUCH")
				h.Unchanged(snap)
				if now := mtime(h, f); !now.Equal(before) {
					h.Errorf("host: the time of %s changed from %v to %v", f, before, now)
				}
			}},
		{Name: "meta-read-denied", Class: Direct, Summary: "read a denied directory's extended attributes (value and names) and watch it with inotify",
			Run: func(h *H) {
				_, p := h.ws()
				d := h.deniedDir(&p, "ws/private")
				ok := h.Write("ws/src/ok", "mine\n")
				if err := unix.Setxattr(d+"/id", "user.secret", []byte(h.Secret), 0); err != nil {
					h.NotApplicable("this file system has no user extended attributes: %v", err)
				}
				if err := unix.Setxattr(d, "user."+h.Secret, []byte("1"), 0); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				if err := unix.Setxattr(ok, "user.cordon-ok", []byte("work-value"), 0); err != nil {
					h.Fatalf("fixture: %v", err)
				}
				o := h.Sandbox(p, `"$ATTACK" __attack getxattr "$D/id" user.secret; "$ATTACK" __attack listxattr "$D"; "$ATTACK" __attack listxattr "$D/id"; `+
					`"$ATTACK" __attack watch "$D"; "$ATTACK" __attack getxattr src/ok user.cordon-ok`, "D="+d)
				h.NoSecret(o)
				h.Refuse(o, "WATCH")
				if !strings.Contains(o.Stdout, "work-value") {
					h.Errorf("reading an extended attribute in the workspace did not work:\n%s", o)
				}
			}},
	}
}

// mtime is f's modification time on the host.
func mtime(h *H, f string) time.Time {
	fi, err := os.Lstat(f)
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	return fi.ModTime()
}

func init() {
	attacks["getxattr"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "getxattr PATH NAME")
		}
		b := make([]byte, 4096)
		n, err := unix.Getxattr(a[0], a[1], b)
		if err != nil {
			fmt.Fprintln(errw, "getxattr:", a[0], err)
			return 1
		}
		fmt.Fprintf(out, "%s=%s\n", a[1], b[:n])
		return 0
	}
	attacks["listxattr"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 1 {
			return usage(errw, "listxattr PATH")
		}
		b := make([]byte, 4096)
		n, err := unix.Listxattr(a[0], b)
		if err != nil {
			fmt.Fprintln(errw, "listxattr:", a[0], err)
			return 1
		}
		fmt.Fprintf(out, "names of %s: %q\n", a[0], b[:n])
		return 0
	}
	attacks["setxattr"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "setxattr PATH NAME")
		}
		if err := unix.Setxattr(a[0], a[1], []byte("pwned"), 0); err != nil {
			fmt.Fprintln(errw, "setxattr:", a[0], err)
			return 1
		}
		mark(out, "SETXATTR")
		return 0
	}
	attacks["removexattr"] = func(a []string, out, errw io.Writer) int {
		if len(a) != 2 {
			return usage(errw, "removexattr PATH NAME")
		}
		if err := unix.Removexattr(a[0], a[1]); err != nil {
			fmt.Fprintln(errw, "removexattr:", a[0], err)
			return 1
		}
		mark(out, "REMOVEXATTR")
		return 0
	}
}
