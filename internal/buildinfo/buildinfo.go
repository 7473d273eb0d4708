// Package buildinfo says which cordon this is: the version it was
// released as, the revision of the tree it was built from, and the Go and
// platform it was built with. 'cordon version' prints it, and the reports
// that machines keep (detect --json, verify's JSON and JUnit) carry it, so
// a report names the cordon that produced it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the release's version, stamped by scripts/release.sh
// (-ldflags "-X github.com/cordon-sandbox/cordon/internal/buildinfo.Version=v1.2.3").
// Empty in any other build: the module's version from the build info
// stands in (a 'go install ...@v1.2.3' has it; a build from a clone says
// "devel").
var Version string

// Revision, Time and Modified ("true" or "false") are the tree's VCS
// state, stamped by the project's build scripts (scripts/ldflags.sh) for
// the builds where the go tool records none: a git worktree (the go tool
// looks for a .git directory, and a worktree's .git is a file), and
// GOFLAGS=-buildvcs=false. Where the go tool recorded its own, that wins.
var Revision, Time, Modified string

// Info is one build's identity.
type Info struct {
	Version  string `json:"version"`            // v1.2.3, or "devel"
	Revision string `json:"revision,omitempty"` // the VCS revision the tree was at
	Time     string `json:"time,omitempty"`     // that revision's commit time (RFC 3339)
	Modified bool   `json:"modified"`           // the tree had changes not committed
	Go       string `json:"go"`                 // go1.26.8
	Platform string `json:"platform"`           // linux/amd64
}

// Get reads this binary's identity.
func Get() Info {
	i := Info{Version: Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if i.Revision == "" && Revision != "" {
		i.Revision, i.Time, i.Modified = Revision, Time, Modified == "true"
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	return i
}

// String is the one line 'cordon --version' prints:
// "cordon v1.2.3 (0123456789ab 2026-12-07T10:00:00Z, modified) go1.26.8 linux/amd64".
func (i Info) String() string {
	var vcs []string
	if i.Revision != "" {
		r := i.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		vcs = append(vcs, strings.TrimSpace(r+" "+i.Time))
	}
	if i.Modified {
		vcs = append(vcs, "modified")
	}
	s := "cordon " + i.Version
	if len(vcs) > 0 {
		s += " (" + strings.Join(vcs, ", ") + ")"
	}
	return fmt.Sprintf("%s %s %s", s, i.Go, i.Platform)
}
