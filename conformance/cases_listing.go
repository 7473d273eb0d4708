package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// listingCases: nothing of cordon's appears in the project while a
// sandbox runs in it, judged by the host's own listing during the run,
// not only after (docs/threat-model.md, class 5).
func listingCases() []Case {
	return []Case{
		{Name: "work-listing-during-run", Class: Work,
			Summary: "the host's recursive listing of a workspace holding a git repository, a nested one, an executable and a link (names, types, modes, owners, contents) taken while a sandboxed command runs in it, and right after cordon returns, equals the listing before; the command reads the whole tree",
			Run:     func(h *H) { h.listingDuringRun() }},
	}
}

// runningBound bounds the wait for the sandboxed command to say it runs:
// a bound on a failure, not a measure of speed.
const runningBound = 20 * time.Second

// listingDuringRun lists the workspace on the host before a launch, while
// its command waits for the case's go-ahead (a FIFO in the fixture,
// outside the workspace), and once the launch returned.
func (h *H) listingDuringRun() {
	ws, p := h.ws()
	h.Host("ws", "git", "init", "-q")
	h.Write("ws/src/main.go", "package main\n")
	h.WriteMode("ws/bin/run.sh", "#!/bin/sh\n", 0o755)
	h.Mkdir("ws/docs/empty")
	h.Symlink("src/main.go", "ws/main.go")
	h.Mkdir("ws/vendor/lib")
	h.Host("ws/vendor/lib", "git", "init", "-q")
	h.Write("ws/vendor/lib/lib.go", "package lib\n")
	marks := h.Mkdir("marks")
	p.Writable = append(p.Writable, marks)
	goFifo := filepath.Join(marks, "go")
	if err := syscall.Mkfifo(goFifo, 0o600); err != nil {
		h.Fatalf("mkfifo %s: %v", goFifo, err)
	}
	h.handOver() // the launch hands the fixture to the case's user: before it, not between listings
	before := snapshot(ws)
	l := h.Script(p, `ls -laR . >/dev/null && cat src/main.go vendor/lib/lib.go >/dev/null && ok READ
: > "$M/running" && ok RUNNING
read g < "$M/go" && [ "$g" = go ] && ok GO
ls -laR . >/dev/null && ok READ_AGAIN`, "M="+marks)
	wait := h.Background(l)
	ended := make(chan Output, 1)
	go func() { ended <- wait() }()
	running := filepath.Join(marks, "running")
	for end := time.Now().Add(runningBound); !exists(running); {
		select {
		case o := <-ended:
			h.Fatalf("the command ended before it said it runs:\n%s", o)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(end) {
			h.Fatalf("host: the command did not say it runs in %v", runningBound)
		}
	}
	during := snapshot(ws)
	// Read-write: the open does not wait for the reader, and the line
	// stays in the pipe until the command reads it.
	f, err := os.OpenFile(goFifo, os.O_RDWR, 0)
	if err != nil {
		h.Fatalf("host: open %s: %v", goFifo, err)
	}
	defer f.Close()
	if _, err := f.WriteString("go\n"); err != nil {
		h.Fatalf("host: write %s: %v", goFifo, err)
	}
	o := <-ended
	after := snapshot(ws)
	h.Expect(o, "READ", "RUNNING", "GO", "READ_AGAIN", "DONE")
	for _, c := range []struct {
		when string
		s    Snapshot
	}{{"during the run", during}, {"right after the run", after}} {
		if d := before.diff(c.s); len(d) > 0 {
			h.Errorf("host: the workspace's listing %s differs from before:\n  %s", c.when, strings.Join(d, "\n  "))
		}
	}
}
