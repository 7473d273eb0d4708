package conformance

// Catalogue returns every case, in report order: ordinary work first, then
// the classes of docs/threat-model.md, then the model differential.
func Catalogue() []Case {
	var all []Case
	for _, part := range [][]Case{
		workCases(), listingCases(), entriesCases(), movedInCases(), gateWorkCases(), gateEscapeCases(), cacheCases(), kernelWorkCases(), directCases(), symlinkCases(), moveCases(), hardlinkCases(),
		notYetCases(), autoExecCases(), autoExecLaterCases(), undoCases(), processCases(), fdCases(), ttyCases(),
		gitCases(), stateCases(), raceCases(), kernelCases(), localhostCases(), auditCases(), composeCases(), launchRaceCases(), mountBoundaryCases(), netCases(), netDirectCases(), boundaryNetCases(), boundaryHeadCases(), boundaryNameCases(), secretCases(), agentHomeCases(), modelCases(), seatbeltCases(),
		boundaryFdCases(), boundaryTermCases(), answerCases(), unixCases(), unixOnCases(), unixAbstractCases(), unixAllowCases(), privateTmpCases(),
		metaCases(), metaFdCases(), edgeCases(), lifetimeCases(), wallCases(),
	} {
		all = append(all, part...)
	}
	return all
}

// linuxOnly marks cases about a mechanism only the Linux backends have
// (bwrap and native build the same mounts, namespaces and filter; the
// landlock backend has the same filter, no_new_privs and session, and no
// namespace: a case about those says so in its Without).
var linuxOnly = []string{"bwrap", "native", "landlock"}

// ws creates the fixture's workspace directory "ws" and returns the
// workspace preset's policy for it.
func (h *H) ws() (string, Policy) {
	w := h.Mkdir("ws")
	return w, Policy{Workspace: w}
}

// deniedDir creates the directory rel with the secret in its file id, and
// denies it in p.
func (h *H) deniedDir(p *Policy, rel string) string {
	d := h.Mkdir(rel)
	h.Write(rel+"/id", h.Secret)
	p.Deny = []string{d}
	return d
}

// readonlyDir creates ws/ro holding f ("original"), read-only in p.
func (h *H) readonlyDir(p *Policy) string {
	d := h.Mkdir("ws/ro")
	h.Write("ws/ro/f", "original\n")
	p.Readonly = []string{d}
	return d
}
