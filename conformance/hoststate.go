package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The host side of a case's judgement: snapshots of the fixture, host
// processes a sandbox must not harm, Unix sockets it must not reach.

// Snapshot is the host state of a tree: names, modes, contents, link
// targets.
type Snapshot map[string]string

// Snapshot records the fixture tree.
func (h *H) Snapshot() Snapshot {
	h.handOver()
	return snapshot(h.Dir)
}

func snapshot(root string) Snapshot {
	s := Snapshot{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			v += " -> " + t
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:8])
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			v += fmt.Sprintf(" %d:%d", st.Uid, st.Gid)
		}
		s[p] = v
		return nil
	})
	return s
}

// diff lists what changed from a to b, ignoring paths under ignore.
func (a Snapshot) diff(b Snapshot, ignore ...string) []string {
	skip := func(p string) bool {
		for _, i := range ignore {
			if p == i || strings.HasPrefix(p, i+"/") {
				return true
			}
		}
		return false
	}
	var d []string
	for p, v := range a {
		if skip(p) {
			continue
		}
		if w, ok := b[p]; !ok {
			d = append(d, "removed "+p)
		} else if v != w {
			d = append(d, fmt.Sprintf("changed %s: %s -> %s", p, v, w))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok && !skip(p) {
			d = append(d, "created "+p)
		}
	}
	slices.Sort(d)
	return d
}

// Unchanged fails if the fixture differs from before, except under the
// listed paths (relative to the fixture or absolute).
func (h *H) Unchanged(before Snapshot, except ...string) {
	for i, e := range except {
		except[i] = h.Path(e)
	}
	// At once: nothing of cordon's is left to go after the sandbox ends.
	d := before.diff(h.Snapshot(), except...)
	if len(d) > 0 {
		if len(d) > 20 {
			d = append(d[:20], fmt.Sprintf("... and %d more", len(d)-20))
		}
		h.Errorf("host tree changed:\n  %s", strings.Join(d, "\n  "))
	}
}

// HostProc is a process outside the sandbox, run as the case's user.
type HostProc struct {
	Pid  int
	done chan struct{}
}

// Alive reports whether the process still runs.
func (p *HostProc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
	}
	// A stopped process counts as harmed too.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 {
			switch s[i+2] {
			case 'T', 't', 'Z', 'X':
				return false
			}
		}
	}
	return true
}

// HostProcess starts sh -c script on the host, in dir, as the case's user,
// and kills it when the case ends.
func (h *H) HostProcess(dir, script string, args ...string) *HostProc {
	h.handOver()
	cmd := exec.Command("/bin/sh", append([]string{"-c", script}, args...)...)
	cmd.Dir = h.Path(dir)
	cmd.Env = h.env(nil)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !h.User.Invoker {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(h.User.Uid), Gid: uint32(h.User.Gid), Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		h.Fatalf("host process: %v", err)
	}
	p := &HostProc{Pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	h.Cleanup(func() {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		<-p.done
	})
	return p
}

// Listen serves a Unix socket at path, owned by the case's user, and
// returns a function that reports how many connections it accepted.
func (h *H) Listen(path string) func() int {
	ln, err := net.Listen("unix", path)
	if err != nil {
		h.Fatalf("fixture: %v", err)
	}
	var mu sync.Mutex
	n := 0
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			c.Close()
		}
	}()
	h.Cleanup(func() { ln.Close() })
	return func() int {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}
