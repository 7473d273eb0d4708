package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// readLease: a lease the sandbox takes must not hold back the host's
// write; the host's own non-blocking open is the judge.
func readLease(h *H) {
	ws, p := h.ws()
	file := h.Write("ws/notes.txt", "original\n")
	ready, goFifo := filepath.Join(ws, "ready"), filepath.Join(ws, "go")
	for _, f := range []string{ready, goFifo} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			h.Fatalf("fixture: mkfifo: %v", err)
		}
	}
	b := h.background(p, `"$ATTACK" __attack lease "$FIX/ws/notes.txt" "$FIX/ws/ready" "$FIX/ws/go"
grep -q original "$FIX/ws/notes.txt" && ok READ`)
	said, err := h.fifo(ready, false, b)
	if err != nil {
		h.Fatalf("the sandbox did not report its lease: %v\n%s", err, b.wait())
	}
	hostErr := openWriteNow(file)
	if _, err := h.fifo(goFifo, true, b); err != nil {
		h.Fatalf("the sandbox did not wait for the host: %v\n%s", err, b.wait())
	}
	o := b.wait()
	if hostErr != nil {
		h.Errorf("host: open for writing while the sandbox held the file: %v (a lease holds the host back; the sandbox said %q)\n%s", hostErr, said, o)
	}
	h.Refuse(o, "LEASED")
	h.Expect(o, "LOCKED", "READ")
}

// inodeVersionCase: the inode generation of a file outside the writable
// roots stays, judged by the host's own FS_IOC_GETVERSION and ctime.
func inodeVersionCase(h *H) {
	_, p := h.ws()
	file := h.Write("outside/ro.txt", "original\n")
	p.Readonly = []string{file}
	// Handed over now and kept, as each launch's hand-over (a chown,
	// even to the same owner) moves the ctime the host judges by.
	if err := os.Lchown(file, h.User.Uid, h.User.Gid); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	h.KeepOwner("outside/ro.txt")
	gen, ctime, err := inodeVersion(file)
	if err != nil {
		h.NotApplicable("the host's file system keeps no inode generation for %s: %v", file, err)
	}
	o := h.Sandbox(p, `"$ATTACK" __attack setversion "$FIX/outside/ro.txt"
grep -q original "$FIX/outside/ro.txt" && ok READ`)
	gen2, ctime2, err := inodeVersion(file)
	if err != nil || gen2 != gen || ctime2 != ctime {
		h.Errorf("host: %s changed: generation %d to %d, ctime %v to %v (%v)\n%s", file, gen, gen2, ctime, ctime2, err, o)
	}
	h.Refuse(o, "SETVERSION")
	h.Expect(o, "READ", "GETVERSION")
}

// mqueueCase: the host's POSIX message queues are out of reach, judged
// by the host's own mq_open.
func mqueueCase(h *H) {
	_, p := h.ws()
	host, own := "/cordon-host-"+filepath.Base(h.Dir), "/cordon-own-"+filepath.Base(h.Dir)
	fd, err := mqOpen(host, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR)
	if err != nil {
		h.NotApplicable("the host has no POSIX message queues to keep one in: %v", err)
	}
	// The case's user owns it, as the user's own queue would be.
	unix.Fchown(fd, h.User.Uid, h.User.Gid)
	unix.Close(fd)
	h.Cleanup(func() { mqUnlink(host); mqUnlink(own) })
	o := h.Sandbox(p, `"$ATTACK" __attack mqueue "$HOSTQ" "$OWNQ"`, "HOSTQ="+host, "OWNQ="+own)
	if fd, err := mqOpen(host, unix.O_RDONLY); err != nil {
		h.Errorf("host: the queue %s is gone: %v\n%s", host, err, o)
	} else {
		unix.Close(fd)
	}
	if fd, err := mqOpen(own, unix.O_RDONLY); !errors.Is(err, unix.ENOENT) {
		if err == nil {
			unix.Close(fd)
		}
		h.Errorf("host: the sandbox made the queue %s (%v)\n%s", own, err, o)
	}
	h.Refuse(o, "UNLINKED")
	if h.Backend() == "landlock" {
		// Elsewhere a queue made is in the sandbox's own IPC namespace,
		// gone with it; the host's mq_open above is the judge.
		h.Refuse(o, "CREATED")
	}
}

// listmountCase: listmount and statmount are refused under landlock,
// whose sandbox shares the user's user namespace (and so may name every
// mount namespace the user owns); native and bwrap answer for their own
// namespace only, which is the sandbox's view. Mount information a tool
// needs stays in /proc/self/mountinfo.
func listmountCase(h *H) {
	_, p := h.ws()
	o := h.Sandbox(p, `"$ATTACK" __attack listmount
grep -q ' / ' /proc/self/mountinfo && ok MOUNTINFO`)
	if h.Backend() == "landlock" {
		h.Refuse(o, "LISTMOUNT", "STATMOUNT")
	}
	h.Expect(o, "MOUNTINFO")
}

// metaSearch: the metadata gate asks the sandbox for search on every
// directory above what it changes, as the read side does; judged by the
// host's attribute and time.
func metaSearch(h *H) {
	// Open mode (no policy): the model lets the sandbox change every
	// file, and only the kernel's search on priv stands in the way. priv
	// is root's own without search bits, not another user's 0700: the
	// suite's landlock launcher runs in a user namespace that maps root
	// alone, so its own walk could not pass another user's directory and
	// would answer EACCES before the gate's check was reached.
	p := Policy{}
	f := h.Write("outside/priv/f", "theirs\n")
	own := h.Write("mine/f", "mine\n")
	priv := h.Path("outside/priv")
	h.KeepOwner("outside/priv")
	if err := os.Chmod(priv, 0o600); err != nil {
		h.Fatalf("fixture: %v", err)
	}
	if err := unix.Setxattr(own, "user.cordon-probe", []byte("1"), 0); err != nil {
		h.NotApplicable("this file system has no user extended attributes: %v", err)
	}
	unix.Removexattr(own, "user.cordon-probe")
	before := mtime(h, f)
	o := h.Sandbox(p, `"$ATTACK" __attack setxattr "$F" user.cordon-meta; touch -m -d 2001-01-01 "$F" 2>/dev/null && ok TOUCH
"$ATTACK" __attack setxattr "$O" user.cordon-own >/dev/null 2>&1; touch -m -d 2001-01-01 "$O" && ok TOUCHOWN`, "F="+f, "O="+own)
	h.Refuse(o, "SETXATTR", "TOUCH")
	h.Expect(o, "TOUCHOWN")
	if _, err := unix.Getxattr(f, "user.cordon-meta", nil); !errors.Is(err, unix.ENODATA) {
		h.Errorf("host: %s has user.cordon-meta (%v)\n%s", f, err, o)
	}
	if now := mtime(h, f); !now.Equal(before) {
		h.Errorf("host: the time of %s changed from %v to %v\n%s", f, before, now, o)
	}
	if _, err := unix.Getxattr(own, "user.cordon-own", nil); err != nil {
		h.Errorf("host: the sandbox's own attribute on %s is missing: %v\n%s", own, err, o)
	}
}

// utf8Twins: names a sandbox made with a byte that is not UTF-8, beside
// their U+FFFD twins, never make a later launch fail (the plan names
// each by its bytes), judged by where the host finds each write.
func utf8Twins(h *H) {
	_, p := h.ws()
	h.gitRepo("ws") // a protected .git: the top is frozen under landlock, each name a rule
	o := h.Sandbox(p, `mkdir "$(printf 'b\377')" "$(printf 'b\357\277\275')" && printf x > "$(printf 'c\377')" && printf y > "$(printf 'c\357\277\275')" && ok MADE`)
	h.Expect(o, "MADE")
	for i := 0; i < 2; i++ {
		o = h.Sandbox(p, `printf raw > "$(printf 'b\377')/w" && printf twin > "$(printf 'b\357\277\275')/w" && ok WROTE`)
		h.Expect(o, "WROTE")
	}
	h.Want("ws/b\xff/w", "raw")
	h.Want("ws/b\xef\xbf\xbd/w", "twin")
	h.Want("ws/c\xff", "x")
	h.Want("ws/c\xef\xbf\xbd", "y")
}
