package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lifetimeCases: a sandbox ends with its launcher (docs/threat-model.md,
// "A killed launcher").
func lifetimeCases() []Case {
	return []Case{
		{Name: "process-outlive-killed-launcher", Class: Process, Backends: linuxOnly,
			Summary: "outlive a launcher killed with SIGKILL: a background job, a daemon that forked twice and called setsid, a process in a group of its own keep running",
			Run:     func(h *H) { h.launcherKilled() }},
	}
}

// launcherGoneBound is how long the case waits for the sandbox's
// processes to end once the launcher is killed: a bound on a failure,
// far above the second docs/threat-model.md promises, not a measure of
// speed.
const launcherGoneBound = 15 * time.Second

// launcherKilled starts a command that leaves a background job, a
// double-forked setsid daemon and a process that moved to a process group
// of its own running, and says so in a file; once the
// host sees that file it kills the launcher with SIGKILL, then judges by
// the host's process table that every process of the sandbox ends, that
// the project is as it was, and that the next launch works.
func (h *H) launcherKilled() {
	if h.InProcess() {
		h.NotApplicable("the launcher is this process, which the case cannot kill; 'cordon run' carries the case")
	}
	_, p := h.ws()
	// The case's own files, in a directory of the workspace that exists
	// before the launch (a root's own entries may be frozen: see
	// docs/threat-model.md, "Frozen directories").
	marks := h.Mkdir("ws/run")
	before := h.Snapshot()
	// Every process of the sandbox has the token in its command line:
	// the shells carry the script, the sleeps it as their argument.
	token := strconv.FormatInt(8e8+time.Now().UnixNano()%1e8, 10)
	script := fmt.Sprintf(`T=%[1]s
sleep %[1]s </dev/null >/dev/null 2>&1 &
( setsid sh -c 'echo $$ > "$M/daemon"; exec sleep %[1]s' </dev/null >/dev/null 2>&1 & )
"$ATTACK" __attack own-group /bin/sh -c 'echo $$ > "$M/group"; exec sleep %[1]s' </dev/null >/dev/null 2>&1 &
i=0
while { [ ! -s "$M/daemon" ] || [ ! -s "$M/group" ]; } && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done
[ -s "$M/daemon" ] && [ -s "$M/group" ] && touch "$M/ready"
exec sleep %[1]s`, token)
	l := h.Script(p, script, "M="+marks)
	started := make(chan int, 1)
	l.Started = func(pid int) { started <- pid }
	wait := h.Background(l)
	ended := make(chan Output, 1)
	go func() { ended <- wait() }()
	var top int
	select {
	case top = <-started:
	case o := <-ended:
		h.Fatalf("the launch ended before it started:\n%s", o)
	}
	ready := filepath.Join(marks, "ready")
	for end := time.Now().Add(launcherGoneBound); !exists(ready); {
		select {
		case o := <-ended:
			h.Fatalf("the command ended before its daemon ran:\n%s", o)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(end) {
			h.Fatalf("host: the command did not say its daemon runs in %v", launcherGoneBound)
		}
	}
	launcher := h.launcherPid(top)
	if launcher <= 0 {
		h.Fatalf("host: no 'cordon run' process below pid %d", top)
	}
	running := withToken(token)
	if len(running) < 4 {
		h.Fatalf("host: the sandbox's processes are not all running before the kill (%d with %s: %v)", len(running), token, running)
	}
	if err := syscall.Kill(launcher, syscall.SIGKILL); err != nil {
		h.Fatalf("host: kill the launcher (pid %d): %v", launcher, err)
	}
	killed := time.Now()
	left := withToken(token)
	for len(left) > 0 && time.Since(killed) < launcherGoneBound {
		time.Sleep(20 * time.Millisecond)
		left = withToken(token)
	}
	if len(left) > 0 {
		h.Errorf("host: %v after the launcher was killed, the sandbox's processes still run: %s", launcherGoneBound, describe(left))
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	select {
	case <-ended:
	case <-time.After(launcherGoneBound):
		h.Errorf("host: the launch's stdout and stderr stayed open %v after its launcher was killed", launcherGoneBound)
	}
	h.Unchanged(before, "ws/run")
	o := h.Sandbox(p, `echo next > "$M/next" && ok NEXT`, "M="+marks)
	h.Expect(o, "NEXT")
	if b, err := os.ReadFile(filepath.Join(marks, "next")); err != nil || string(b) != "next\n" {
		h.Errorf("host: the next launch did not write ws/run/next (%q, %v)\n%s", b, err, o)
	}
}

// launcherPid is the launcher below top, the process the executor
// started: 'cordon run' itself, or what it exec'd in its place (bwrap),
// or the child of the wrap it runs in (the landlock catalogue's).
func (h *H) launcherPid(top int) int {
	if b, ok := h.x.(*Binary); !ok || len(b.Wrap) == 0 {
		return top
	}
	for _, k := range childPids(top) {
		if args := cmdline(k); len(args) > 1 && args[1] == "run" {
			return k
		}
	}
	return 0
}

// childPids are the children of pid's threads, from the host's /proc.
func childPids(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(f); err == nil {
				out = append(out, k)
			}
		}
	}
	return out
}

// cmdline is pid's argument vector (empty for a zombie).
func cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// withToken are the host's processes, zombies aside, whose command line
// holds token.
func withToken(token string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if strings.Contains(strings.Join(cmdline(pid), " "), token) {
			out = append(out, pid)
		}
	}
	return out
}

// describe names each pid's command line, parent and state.
func describe(pids []int) string {
	var s []string
	for _, pid := range pids {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := string(st)
		if i := strings.LastIndexByte(f, ')'); i > 0 {
			f = f[i+2:]
		}
		fs := strings.Fields(f)
		state, ppid := "?", "?"
		if len(fs) > 1 {
			state, ppid = fs[0], fs[1]
		}
		s = append(s, fmt.Sprintf("%d (%q, parent %s, state %s)", pid, strings.Join(cmdline(pid), " "), ppid, state))
	}
	return strings.Join(s, "; ")
}
