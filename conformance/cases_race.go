package conformance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Calls per file tools' race (half of them swapped), launches per stubs'
// race (half of them armed). The stubs' race wins its window only now and
// then, so no check rests on winning it (stubs-swap-at-stub forces the
// moment with the launcher's test hook): 50 launches keep it an attack
// made for real through cordon run on every backend and user without
// making it the suite's dearest case.
const (
	raceAttempts      = 60
	raceStubsLaunches = 50
)

// raceCases race cordon's own work outside the sandbox (the runner's file
// tools, the launcher's mount stubs) from inside a sandbox of the same
// workspace, and judge by what changed on the host.
func raceCases() []Case {
	return []Case{
		{Name: "race-filetools-write", Class: Symlink, Backends: linuxOnly,
			Summary: "the runner's write_file and edit_file write dir/.bashrc and dir/new-N/x through the Go API, 60 times; every other call, between its decision and its I/O, ws/dir is exchanged with a link to HOME (a runner hook acts at that moment)",
			Run:     raceFiletoolsWrite},
		{Name: "race-filetools-read", Class: Symlink, Backends: linuxOnly,
			Summary: "the runner's read_file (a file, a directory) and glob read through dir, 60 times; every other call, between its decision and its I/O, ws/dir is exchanged with a link to the denied ~/.ssh (a runner hook acts at that moment)",
			Run:     raceFiletoolsRead},
		{Name: "race-stubs", Class: NotYet, Backends: linuxOnly,
			Open:    map[string]string{"bwrap": "bwrap resolves bind sources following links before it builds the sandbox, so a swap at that moment redirects a pin (FINDINGS.md F8); auto takes the native backend where it is usable"},
			Without: map[string]string{"landlock": "a race of the launcher's mount stubs: the landlock backend makes none (a denied name that does not exist yet is refused by its frozen parent instead)"},
			Summary: "50 launches each deny a not-yet-existing ws/d/xN/a/b/c while a sandbox of the workspace runs a swapper; for every other launch it swaps ws/d for a link to a directory outside (renameat2 RENAME_EXCHANGE) the moment the launcher makes the first stub, and each launch in between, beside the swapper holding off, must succeed",
			Run:     raceStubs},
		{Name: "stubs-swap-at-stub", Class: NotYet, Backends: linuxOnly,
			Without: map[string]string{"landlock": "about the launcher's mount stubs: the landlock backend makes none"},
			Summary: "a launch makes a not-yet-existing ro/d/x/a/b/c writable in a read-only ro; right after the launcher makes its first stub (ro/d/x), ro/d is exchanged with a link to a directory outside (a test hook of the launcher acts at that moment): nothing may be made outside",
			Run:     stubsSwapAtStub},
	}
}

// stubsSwapAtStub: the launcher makes the rest of a chain of stubs
// beneath the directory it opened, not through a link swapped in after
// the first; race-stubs races the same moment through cordon run.
func stubsSwapAtStub(h *H) {
	if !h.InProcess() {
		h.NotApplicable("the swap at the launcher's first stub needs its test hook, in this process (the mutation check runs it); race-stubs races the same moment through cordon run")
	}
	// A writable root that does not exist yet in a place the sandbox may
	// not change is the one kind of root that still gets stubs (an
	// absent denied one has the entry gate instead).
	ws, _ := h.ws()
	h.Mkdir("ro/d")
	// Where the rest of the chain would land through the link.
	h.Mkdir("outside/x")
	h.Symlink(h.Path("outside"), "ro/l")
	snap := h.Snapshot()
	swapped := false
	exchange := func() {
		h.rename("ro/d", "ro/d.x")
		h.rename("ro/l", "ro/d")
		h.rename("ro/d.x", "ro/l")
	}
	o, err := h.x.Exec(h.ctx, h.User, Launch{Policy: Policy{Workspace: ws, Readonly: []string{h.Path("ro")}, Writable: []string{h.Path("ro/d/x/a/b/c")}},
		Dir: ws, Env: h.env(nil), Argv: []string{"/bin/sh", "-c", "true"},
		At: func(p string) {
			if p == "stub" && !swapped {
				swapped = true
				exchange()
			}
		}})
	if swapped {
		exchange()
	}
	if err != nil {
		h.Fatalf("launch: %v\n%s", err, o)
	}
	if !swapped {
		h.Fatalf("the launcher made no stub:\n%s", o)
	}
	// Refused (a link met beneath the root) or launched: either way
	// nothing outside.
	h.Unchanged(snap, "ro")
	if o.Code != 0 && stubLaunchOutcome(o, nil) != "raced" {
		h.Errorf("the launch failed for another reason than meeting the link:\n%s", o)
	}
}

// raceFiletools runs the runner's file tools (op "write" or "read")
// through ws/dir, which every other call finds exchanged with a link to
// target between its decision and its I/O, and returns each call's
// outcome and their tally.
func (h *H) raceFiletools(name, op, target string) ([]raceAttempt, raceStats) {
	ws := h.Path("ws")
	h.Symlink(target, "ws/link")
	res := h.runFileToolRace(ws, op, raceAttempts)
	st := countRace(res)
	h.logRace(name, st, "")
	return res, st
}

// raceHappened fails the case when no call met the swap or none worked
// (then it proves nothing), or a call failed for another reason than
// meeting the link.
func (h *H) raceHappened(res []raceAttempt, st raceStats) {
	if st.succeeded == 0 || st.swapped == 0 {
		h.Errorf("the race did not happen (%s): the case proves nothing", st)
	}
	if st.failed > 0 {
		h.Errorf("%d calls failed for another reason than a link (%s), e.g.: %s", st.failed, st, firstOther(res))
	}
}

// raceFiletoolsWrite: no write lands in HOME through the swapped link.
func raceFiletoolsWrite(h *H) {
	h.Mkdir("ws")
	h.Write("ws/dir/.bashrc", "decoy token\n")
	h.Write("home/.bashrc", "original\n")
	snap := h.Snapshot()
	res, st := h.raceFiletools("race-filetools-write", "write", h.Home)
	h.Unchanged(snap, "ws")
	h.raceHappened(res, st)
}

// raceFiletoolsRead: no read returns the denied ~/.ssh through the
// swapped link, not even a name in it.
func raceFiletoolsRead(h *H) {
	h.Mkdir("ws")
	h.Write("ws/dir/secret", "decoy\n")
	h.WriteMode("home/.ssh/secret", h.Secret, 0o600)
	h.WriteMode("home/.ssh/"+h.Secret, "", 0o600) // its name is a secret too
	res, st := h.raceFiletools("race-filetools-read", "read", filepath.Join(h.Home, ".ssh"))
	leaked := 0
	for _, a := range res {
		if strings.Contains(a.Output, h.Secret) || strings.Contains(a.Error, h.Secret) {
			if leaked++; leaked == 1 {
				h.Errorf("%s read the denied ~/.ssh: %q", a.Tool, clip(a.Output))
			}
		}
	}
	if leaked > 0 {
		h.Errorf("%d of %d reads got the denied file (%s)", leaked, len(res), st)
	}
	h.raceHappened(res, st)
}

// raceStubs: no launch makes a mount stub outside the workspace through
// ws/d swapped for a link while it makes its stubs, and a launch beside a
// swapper that holds off works. Every other launch is armed: the swapper
// exchanges ws/d the moment that launch makes its first stub, if it sees
// it before the harness disarms it after the launch (which of the two is
// first is scheduling, so it is only logged). The launches in between are
// not armed, so the swapper, running, is known to leave them alone: each
// must succeed, at a moment the harness forces rather than wins.
func raceStubs(h *H) {
	ws, p := h.ws()
	h.Mkdir("ws/d")
	// A chain of its own for each launch, so that each makes a stub in d
	// (none adopts the last one's) named for it, and a directory outside
	// where the rest of each chain would land.
	for i := range raceStubsLaunches {
		h.Mkdir(fmt.Sprintf("outside/x%d", i))
	}
	snap := h.Snapshot()
	b := h.background(p, `ln -s "$FIX/outside" l && "$ATTACK" __attack swap-on-create "$PWD/d" "$PWD/d" "$PWD/l" 3ms "$PWD/.ready" "$PWD/.stop" "$PWD"`)
	h.waitFor(filepath.Join(ws, ".ready"), b)
	count := map[string]int{}
	var firstOther, firstIdle string
	met := 0
	for i := range raceStubsLaunches {
		name := fmt.Sprintf("x%d", i)
		armed := i%2 == 1
		arm := filepath.Join(ws, "arm-"+name)
		if armed {
			if err := os.WriteFile(arm, nil, 0o644); err != nil {
				h.Fatalf("fixture: %v", err)
			}
		}
		deny := filepath.Join(ws, "d", name, "a/b/c")
		ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
		o, err := h.x.Exec(ctx, h.User, Launch{Policy: Policy{Workspace: ws, Deny: []string{deny}},
			Dir: ws, Env: h.env(nil), Argv: []string{"/bin/sh", "-c", "true"}})
		cancel()
		kind := stubLaunchOutcome(o, err)
		if !armed {
			if count["idle-"+kind]++; kind != "ok" && firstIdle == "" {
				firstIdle = fmt.Sprintf("%s: %v\n%s", name, err, o)
			}
			continue
		}
		if count[kind]++; kind == "other" && firstOther == "" {
			firstOther = fmt.Sprintf("%s: %v\n%s", name, err, o)
		}
		// Disarm; if the swapper took the arm first, its swap met this
		// launch (or came just after it): wait until it has swapped back.
		switch err := os.Remove(arm); {
		case errors.Is(err, fs.ErrNotExist):
			met++
			back := filepath.Join(ws, "back-"+name)
			h.waitFor(back, b)
			os.Remove(back)
		case err != nil:
			h.Fatalf("fixture: %v", err)
		}
	}
	touch(filepath.Join(ws, ".stop"))
	o := h.swapperDone(b)
	idle := raceStubsLaunches / 2
	st := fmt.Sprintf("launches=%d idle=%d idle-ok=%d armed=%d swapped=%d ok=%d raced-refused=%d bwrap-refused=%d other-failed=%d",
		raceStubsLaunches, idle, count["idle-ok"], raceStubsLaunches-idle, met, count["ok"], count["raced"], count["bwrap"], count["other"])
	h.logRace("race-stubs", stringer(st), swaps(o))
	h.Unchanged(snap, "ws")
	if n := count["other"]; n > 0 {
		h.Errorf("%d launches failed for another reason (%s), e.g.:\n%s", n, st, firstOther)
	}
	if count["idle-ok"] != idle {
		h.Errorf("%d of %d launches beside the swapper holding off failed (%s), e.g.:\n%s", idle-count["idle-ok"], idle, st, firstIdle)
	}
}

// stubLaunchOutcome sorts one launch of race-stubs: "ok", "raced" (cordon
// refused it, having met the swap), "bwrap" (bwrap refused it) or "other".
func stubLaunchOutcome(o Output, err error) string {
	switch {
	case err != nil:
		return "other"
	case o.Code == 0:
		return "ok"
	case strings.Contains(o.Stderr, "symbolic link"):
		// The launcher met the link making a stub, or canonicalization
		// met it and dropped the root rather than make its stub where it
		// points.
		return "raced"
	case o.Code == 125 && (strings.Contains(o.Stderr, "readlink") ||
		strings.Contains(o.Stderr, "changed after the policy was built") ||
		strings.Contains(o.Stderr, "changed while the sandbox was being prepared")):
		// canonicalization met the swap half-way (a link that was a
		// directory again when read), or the launcher, or the native
		// init as it mounted, saw a root change identity: refused.
		return "raced"
	case strings.HasPrefix(o.Stderr, "bwrap: Race condition"):
		return "bwrap" // bwrap's own check of a bound descriptor
	case strings.HasPrefix(o.Stderr, "bwrap: Can't"):
		// bwrap met it at mount time (the stubs were made before the
		// swap): no mount target, no launch.
		return "bwrap"
	}
	return "other"
}

type stringer string

func (s stringer) String() string { return string(s) }

// swapperDone waits for a swapper told to stop and checks that it ran
// inside a sandbox to its end.
func (h *H) swapperDone(b *bg) Output {
	o := b.wait()
	if Marked(o, "NOSANDBOX") || !Marked(o, "DONE") || !Marked(o, "SWAPPED") {
		h.Fatalf("the swapper did not run to its end inside a sandbox:\n%s", o)
	}
	return o
}

var exchangesRe = regexp.MustCompile(`exchanges (\d+)(?: failed (\d+))?`)

// swaps is the swapper's count of exchanges, for the record.
func swaps(o Output) string {
	if m := exchangesRe.FindStringSubmatch(o.Stdout); m != nil {
		if m[2] != "" {
			return "swapper-exchanges=" + m[1] + " swapper-failed=" + m[2]
		}
		return "swapper-exchanges=" + m[1]
	}
	return ""
}

func firstOther(as []raceAttempt) string {
	for _, a := range as {
		if a.Action != "DENY" && a.Outcome != "SUCCEEDED" && !(a.Swapped && refusedForLink(a.Error)) {
			return fmt.Sprintf("%s %s %s: %s", a.Tool, a.Action, a.Outcome, a.Error)
		}
	}
	return ""
}
