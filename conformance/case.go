package conformance

import (
	"fmt"
	"time"
)

// Class is a class of escape from the threat model (docs/threat-model.md),
// or one of the two kinds of case that are not attacks.
type Class int

// The classes of the threat model. Stateful classes (CrossLaunch,
// HostTools) take two steps: an attacker launch, then a victim launch or
// what the user does next on the host.
const (
	// Work cases are ordinary work that must succeed.
	Work Class = 0

	Direct      Class = 1  // read, list or write what the policy denies
	Symlink     Class = 2  // links in policy paths, planted or swapped in
	Move        Class = 3  // rename a protected root or an ancestor away
	Hardlink    Class = 4  // hard links to read-only files
	NotYet      Class = 5  // protected paths that do not exist at launch
	AutoExec    Class = 6  // files host tools run or obey later
	Undo        Class = 7  // unmount, remount, namespaces, capabilities, setuid
	Process     Class = 8  // other processes: /proc, signals, ptrace
	FD          Class = 9  // inherited descriptors
	TTY         Class = 10 // the terminal
	CrossLaunch Class = 11 // state a later launch reads
	HostTools   Class = 12 // what host tools (git) read after the sandbox
	Kernel      Class = 13 // kernel objects shared with the host
	DoS         Class = 14 // making later launches fail
	Network     Class = 15 // the network allowlist
	Boundary    Class = 16 // what crosses into a sandbox, and what runs on the host for it

	// Model cases compare the sandbox with policy.Access path by path.
	Model Class = 99
)

var classNames = map[Class]string{
	Work:        "work",
	Direct:      "1 direct",
	Symlink:     "2 symlink",
	Move:        "3 move",
	Hardlink:    "4 hardlink",
	NotYet:      "5 not-yet",
	AutoExec:    "6 autoexec",
	Undo:        "7 undo",
	Process:     "8 process",
	FD:          "9 fd",
	TTY:         "10 tty",
	CrossLaunch: "11 cross-launch",
	HostTools:   "12 host-tools",
	Kernel:      "13 kernel",
	DoS:         "14 dos",
	Network:     "15 network",
	Boundary:    "16 boundary",
	Model:       "model",
}

func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return fmt.Sprintf("class %d", int(c))
}

// Users says which users a case is about.
type Users int

const (
	// AnyUser cases run as every user of the run.
	AnyUser Users = iota
	// RootOnly cases are about a launcher running as root.
	RootOnly
	// UnprivilegedOnly cases are about an unprivileged launcher (e.g. a
	// setuid binary must not raise it to root).
	UnprivilegedOnly
)

// Case is one named attempt.
type Case struct {
	Name    string
	Class   Class
	Summary string
	// Backends lists the backends the case applies to; nil means all.
	Backends []string
	// Open names backends where the defence is known not to hold, each
	// with the finding that says why (conformance/FINDINGS.md): the case
	// is reported not applicable there, with that reason, rather than
	// failing at random (a race it wins only now and then).
	Open map[string]string
	// Without names backends the case cannot apply to, each with why:
	// the mechanism it attacks is one that backend does not have (the
	// landlock backend makes no mount and no pid namespace), so there is
	// nothing for it to undo, and another case covers the same promise.
	Without map[string]string
	// OneBackend, when set, says why one backend is enough for the case
	// in a run that goes through several (the catalogue tests run all
	// three in one process; 'cordon verify' runs one): what it attacks is
	// a step cordon takes on the host before any backend, and what it
	// needs of a backend another case checks through each of them. The
	// first backend of the run takes it; the others report it not
	// applicable with this reason.
	OneBackend string
	Users      Users
	// RootHarness, when set, says why the case's fixture needs the suite
	// itself run as root (a setuid-root copy, a mount on the host, a
	// directory owned by another user): run by a normal user, the case is
	// not applicable with this reason, never failed. (As root, it still
	// runs as every user of the run.)
	RootHarness string
	// Needs lists programs that must be on PATH for the attempt; when one
	// is missing the case is not applicable (another case covers the same
	// attack with other tools).
	Needs []string
	// Run builds the fixture, runs the attempt and judges it through h.
	Run func(h *H)
}

// notApplicable reports why c does not apply to backend, or "" when it
// does.
func (c *Case) notApplicable(backend string) string {
	if why, ok := c.Open[backend]; ok {
		return "open with " + backend + ": " + why
	}
	if why, ok := c.Without[backend]; ok {
		return "not with " + backend + ": " + why
	}
	if c.Backends == nil {
		return ""
	}
	for _, b := range c.Backends {
		if b == backend {
			return ""
		}
	}
	return fmt.Sprintf("only for %v", c.Backends)
}

// Outcome is a case's verdict.
type Outcome string

const (
	Pass          Outcome = "pass"
	Fail          Outcome = "FAIL"
	NotApplicable Outcome = "n/a"
	// NotRun is a case an interrupted run did not run to its end: never
	// a verdict on the host.
	NotRun Outcome = "not run"
)

// Result is one case run as one user.
type Result struct {
	Case    string  `json:"case"`
	Class   string  `json:"class"`
	User    string  `json:"user"`
	Outcome Outcome `json:"result"`
	Detail  string  `json:"detail,omitempty"`
	// Started is when the case began, Elapsed its wall time, both kept
	// so that a report can give each user's suite its wall time.
	Started time.Time     `json:"-"`
	Elapsed time.Duration `json:"-"`
	Seconds float64       `json:"seconds"`
}
