package conformance

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Calls per file tools' race (half of them swapped).
const raceAttempts = 60

// raceCases race cordon's own work outside the sandbox (the runner's file
// tools) from inside a sandbox of the same workspace, and judge by what
// changed on the host.
func raceCases() []Case {
	return []Case{
		{Name: "race-filetools-write", Class: Symlink, Backends: linuxOnly,
			Summary: "the runner's write_file and edit_file write dir/.bashrc and dir/new-N/x through the Go API, 60 times; every other call, between its decision and its I/O, ws/dir is exchanged with a link to HOME (a runner hook acts at that moment)",
			Run:     raceFiletoolsWrite},
		{Name: "race-filetools-read", Class: Symlink, Backends: linuxOnly,
			Summary: "the runner's read_file (a file, a directory) and glob read through dir, 60 times; every other call, between its decision and its I/O, ws/dir is exchanged with a link to the denied ~/.ssh (a runner hook acts at that moment)",
			Run:     raceFiletoolsRead},
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

func firstOther(as []raceAttempt) string {
	for _, a := range as {
		if a.Action != "DENY" && a.Outcome != "SUCCEEDED" && !(a.Swapped && refusedForLink(a.Error)) {
			return fmt.Sprintf("%s %s %s: %s", a.Tool, a.Action, a.Outcome, a.Error)
		}
	}
	return ""
}
