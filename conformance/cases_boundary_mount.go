package conformance

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// bwrapPropagation is why a mount made on the host during a run reaches a
// sandbox that an unprivileged user builds with bubblewrap
// (docs/threat-model.md, section 16).
const bwrapPropagation = "bubblewrap makes every mount of its namespace a slave of the host's (MS_SLAVE|MS_REC, every version up to 0.11) and has no option to make the finished tree private, and the command it runs has no capability to; cordon gives bwrap a private mount namespace of its own only when it holds CAP_SYS_ADMIN (a root launcher), so for this user a mount the host makes later under a shared mount point arrives inside (FINDINGS.md F10); auto takes the native backend wherever it is usable"

// mountBoundaryCases: what arrives in a running sandbox from the host's
// mount table.
func mountBoundaryCases() []Case {
	return []Case{
		{Name: "boundary-mount-arrives-later", Class: Boundary, Backends: linuxOnly,
			Summary:     "the host makes a shared mount point under the fixture (a tmpfs, mount --make-shared) and, while a sandbox that may only read it waits, mounts a tmpfs (mode 1777, without nosuid or nodev) beneath it; the sandbox then writes there, plants a setuid copy of sh and a device node: nothing may appear in the host's mount",
			RootHarness: "the host's side of the case mounts",
			Run:         mountArrivesLater},
	}
}

// mountArrivesLater: mounts made on the host while a sandbox runs do not
// reach it. The host side needs root (it mounts); the sandbox runs as the
// case's user.
func mountArrivesLater(h *H) {
	if h.Backend() == "bwrap" && h.User.Uid != 0 {
		h.NotApplicable("open with bwrap for an unprivileged launcher: %s", bwrapPropagation)
	}
	ws, p := h.ws()
	shared, late := h.Mkdir("shared"), filepath.Join(h.Path("shared"), "late")
	h.KeepOwner(shared)
	h.Host(".", "mount", "-t", "tmpfs", "-o", "mode=0755", "cordon-shared", shared)
	h.Cleanup(func() { exec.Command("umount", "-l", shared).Run() })
	h.Host(".", "mount", "--make-shared", shared)
	h.Mkdir("shared/late")
	h.KeepOwner(late)
	for _, f := range []string{"ready", "go"} {
		if err := syscall.Mkfifo(filepath.Join(ws, f), 0o600); err != nil {
			h.Fatalf("fixture: mkfifo: %v", err)
		}
	}
	// The sandbox says it runs (ready), waits for the host's mount (go),
	// then attacks it.
	b := h.background(p, `echo r > "$FIX/ws/ready"
read x < "$FIX/ws/go"
L="$FIX/shared/late"
grep -q " $L " /proc/self/mountinfo && ok SEES_MOUNT
echo pwned > "$L/planted" && ok WRITE
cp /bin/sh "$L/sh" && chmod 4755 "$L/sh" && ok SETUID
mknod "$L/null" c 1 3 && ok MKNOD
mkdir "$L/d" && ok MKDIR`)
	if _, err := h.fifo(filepath.Join(ws, "ready"), false, b); err != nil {
		h.Fatalf("the sandbox did not get under way: %v\n%s", err, b.wait())
	}
	h.Host(".", "mount", "-t", "tmpfs", "-o", "mode=1777", "cordon-late", late)
	h.Cleanup(func() { exec.Command("umount", "-l", late).Run() })
	if _, err := h.fifo(filepath.Join(ws, "go"), true, b); err != nil {
		h.Fatalf("the sandbox did not wait for the host's mount: %v\n%s", err, b.wait())
	}
	o := b.wait()
	if Marked(o, "NOSANDBOX") || !Marked(o, "DONE") {
		h.Fatalf("the script did not run to its end inside a sandbox:\n%s", o)
	}
	// Judged by the host's mount, the one the sandbox must not reach.
	ents, err := os.ReadDir(late)
	if err != nil {
		h.Fatalf("host: %v", err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		h.Errorf("host: the sandbox wrote in a mount made after it started: %s\n%s", strings.Join(names, " "), o)
	}
	h.Refuse(o, "WRITE", "SETUID", "MKNOD", "MKDIR")
}

// fifo opens the FIFO at path (for writing, or else for reading) and
// writes a line to it or reads it to its end, unless the sandbox b ends
// first or a minute passes; the other end's open is the sandbox's.
func (h *H) fifo(path string, write bool, b *bg) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		if write {
			done <- result{"", os.WriteFile(path, []byte("go\n"), 0)}
			return
		}
		s, err := os.ReadFile(path)
		done <- result{string(s), err}
	}()
	// On the way out early, open the FIFO both ways ourselves, which
	// completes the goroutine's open so that it does not stay behind.
	unblock := func() {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	}
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	select {
	case r := <-done:
		return r.s, r.err
	case o := <-b.done:
		b.out = &o
		unblock()
		return "", errors.New("the sandbox ended first")
	case <-limit.C:
		unblock()
		return "", errors.New("a minute passed")
	}
}
