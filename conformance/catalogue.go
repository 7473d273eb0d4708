package conformance

// Catalogue returns every case, in report order: ordinary work first, then
// the classes of docs/threat-model.md, then the model differential.
func Catalogue() []Case {
	var all []Case
	for _, part := range [][]Case{
		workCases(), kernelWorkCases(), directCases(), symlinkCases(), moveCases(), hardlinkCases(),
		notYetCases(), autoExecCases(), undoCases(), processCases(), fdCases(), ttyCases(),
		gitCases(), stateCases(), raceCases(), kernelCases(), auditCases(), composeCases(), launchRaceCases(), netCases(), modelCases(), seatbeltCases(),
	} {
		all = append(all, part...)
	}
	return all
}

// bwrapOnly marks cases about a mechanism only the bwrap backend has.
var bwrapOnly = []string{"bwrap"}

// ws creates the fixture's workspace directory "ws" and returns the
// workspace preset's policy for it.
func (h *H) ws() (string, Policy) {
	w := h.Mkdir("ws")
	return w, Policy{Workspace: w}
}
