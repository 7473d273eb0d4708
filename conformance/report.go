package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Summary is the one-line verdict, e.g. "verify: 88 passed, 0 failed,
// 6 not applicable"; an interrupted run adds what it did not run and why.
func (r *Report) Summary() string {
	stopped := ""
	if r.Interrupted != "" || r.NotRun > 0 {
		stopped = fmt.Sprintf(", %d not run (%s)", r.NotRun, r.Interrupted)
	}
	return fmt.Sprintf("verify: %d passed, %d failed, %d not applicable%s (backend %s, users %s, %.1fs)",
		r.Passed, r.Failed, r.NA, stopped, r.Backend, strings.Join(r.Users, "+"), r.Elapsed.Seconds())
}

// WriteTable prints one row per case and user, the failures' details, and
// the summary.
func (r *Report) WriteTable(w io.Writer) {
	wc, wk, wu := len("CASE"), len("CLASS"), len("USER")
	for _, x := range r.Results {
		wc, wk, wu = max(wc, len(x.Case)), max(wk, len(x.Class)), max(wu, len(x.User))
	}
	row := func(c, k, u, res, t string) {
		fmt.Fprintf(w, "%-*s  %-*s  %-*s  %-7s  %6s\n", wc, c, wk, k, wu, u, res, t)
	}
	row("CASE", "CLASS", "USER", "RESULT", "TIME")
	for _, x := range r.Results {
		t := fmt.Sprintf("%.2fs", x.Seconds)
		if x.Outcome == NotRun {
			t = "-"
		}
		row(x.Case, x.Class, x.User, string(x.Outcome), t)
	}
	for _, x := range r.Results {
		if x.Outcome == Fail {
			fmt.Fprintf(w, "\n--- FAIL: %s (%s, class %s)\n    %s\n", x.Case, x.User, x.Class,
				strings.ReplaceAll(shortDetail(x.Detail), "\n", "\n    "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, r.Summary())
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string `xml:"name,attr"`
	Timestamp string `xml:"timestamp,attr,omitempty"`
	Tests     int    `xml:"tests,attr"`
	Failures  int    `xml:"failures,attr"`
	Skipped   int    `xml:"skipped,attr"`
	Time      string `xml:"time,attr"`
	// Properties name the cordon that ran the suite (buildinfo).
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one testsuite per user; not
// applicable and not run cases are skipped test cases, never passed or
// failed ones. Times are wall times: the run's for the whole, each case's
// own, and for a user's suite the span from its first case's start to its
// last case's end (cases run side by side, so the sum of their times
// would overstate it). A failure keeps its detail whole.
func (r *Report) WriteJUnit(w io.Writer) error {
	secs := func(d float64) string { return fmt.Sprintf("%.3f", d) }
	out := junitSuites{Time: secs(r.Elapsed.Seconds())}
	byUser := map[string]*junitSuite{}
	for _, u := range r.Users {
		out.Suites = append(out.Suites, junitSuite{Name: "cordon-verify/" + r.Backend + "/" + u, Properties: r.properties()})
	}
	for i := range out.Suites {
		byUser[r.Users[i]] = &out.Suites[i]
	}
	for _, x := range r.Results {
		s := byUser[x.User]
		if s == nil {
			continue
		}
		jc := junitCase{Class: "conformance." + strings.ReplaceAll(x.Class, " ", "."), Name: x.Case, Time: secs(x.Seconds)}
		switch x.Outcome {
		case Fail:
			jc.Failure = &junitMessage{Message: firstLine(x.Detail), Text: x.Detail}
			s.Failures++
		case NotApplicable:
			jc.Skipped = &junitMessage{Message: "not applicable: " + x.Detail}
			s.Skipped++
		case NotRun:
			jc.Skipped = &junitMessage{Message: x.Detail}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, jc)
	}
	for i := range out.Suites {
		s := &out.Suites[i]
		if first, d := r.span(r.Users[i]); !first.IsZero() {
			s.Time, s.Timestamp = secs(d.Seconds()), first.UTC().Format("2006-01-02T15:04:05")
		} else {
			s.Time = secs(0)
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// properties are the JUnit properties naming the cordon of the report.
func (r *Report) properties() []junitProperty {
	c := r.Cordon
	ps := []junitProperty{{"cordon.version", c.Version}}
	if c.Revision != "" {
		ps = append(ps, junitProperty{"cordon.revision", c.Revision}, junitProperty{"cordon.time", c.Time})
	}
	return append(ps, junitProperty{"cordon.modified", fmt.Sprint(c.Modified)},
		junitProperty{"cordon.go", c.Go}, junitProperty{"cordon.platform", c.Platform})
}

// span is the wall time user's cases took, from the first one's start
// to the last one's end; first is zero when none of them ran.
func (r *Report) span(user string) (first time.Time, d time.Duration) {
	var last time.Time
	for _, x := range r.Results {
		if x.User != user || x.Started.IsZero() {
			continue
		}
		if first.IsZero() || x.Started.Before(first) {
			first = x.Started
		}
		if end := x.Started.Add(x.Elapsed); end.After(last) {
			last = end
		}
	}
	return first, last.Sub(first)
}

// Table details longer than this many lines keep their head and tail.
const tableHead, tableTail = 40, 40

// shortDetail shortens a failure's detail for the table: whole lines
// only, the first ones (which say what failed) and the last ones (where
// a command's output says why it ended), with a line between that says
// how much is left out and where it is. JSON and JUnit keep it whole.
func shortDetail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= tableHead+tableTail+1 {
		return strings.Join(lines, "\n")
	}
	left := lines[tableHead : len(lines)-tableTail]
	n := 0
	for _, l := range left {
		n += len(l) + 1
	}
	mid := fmt.Sprintf("[... %d lines (%d bytes) left out here; --json and --junit keep them ...]", len(left), n)
	return strings.Join(append(append(lines[:tableHead:tableHead], mid), lines[len(lines)-tableTail:]...), "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
