package conformance

import (
	"fmt"
	"time"
)

// Class is a class of escape from DESIGN.md §2 (1 to 10), or one of the
// two kinds of case that are not attacks.
type Class int

const (
	// Work cases are ordinary work that must succeed.
	Work Class = 0
	// Model cases compare the sandbox with policy.Access path by path.
	Model Class = 11
)

var classNames = map[Class]string{
	Work:  "work",
	1:     "1 direct",
	2:     "2 symlink",
	3:     "3 move",
	4:     "4 hardlink",
	5:     "5 not-yet",
	6:     "6 autoexec",
	7:     "7 undo",
	8:     "8 process",
	9:     "9 fd",
	10:    "10 tty",
	Model: "model",
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
	Users    Users
	// Needs lists programs that must be on PATH for the attempt; when one
	// is missing the case is not applicable (another case covers the same
	// attack with other tools).
	Needs []string
	// Run builds the fixture, runs the attempt and judges it through h.
	Run func(h *H)
}

// applies reports why c cannot apply to backend, or "".
func (c *Case) applies(backend string) string {
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
)

// Result is one case run as one user.
type Result struct {
	Case    string        `json:"case"`
	Class   string        `json:"class"`
	User    string        `json:"user"`
	Outcome Outcome       `json:"result"`
	Detail  string        `json:"detail,omitempty"`
	Elapsed time.Duration `json:"-"`
	Seconds float64       `json:"seconds"`
}
