package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
)

func sampleReport() *Report {
	r := &Report{Backend: "bwrap", Executor: "cordon run", Users: []string{"root", "cordon-verify"},
		Elapsed: 1500 * time.Millisecond, Seconds: 1.5}
	r.Results = []Result{
		{Case: "work-files", Class: Work.String(), User: "root", Outcome: Pass, Seconds: 0.04},
		{Case: "deny-read-file", Class: Class(1).String(), User: "root", Outcome: Fail, Seconds: 0.05,
			Detail: "the secret came out <of> the \"sandbox\" & more\nline two"},
		{Case: "undo-setuid-binary", Class: Class(7).String(), User: "root", Outcome: NotApplicable, Detail: "about an unprivileged launcher"},
		{Case: "work-files", Class: Work.String(), User: "cordon-verify", Outcome: Pass, Seconds: 0.03},
	}
	r.Passed, r.Failed, r.NA = 2, 1, 1
	return r
}

func TestReportJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteJSON(&b))
	var got struct {
		Backend string `json:"backend"`
		Results []struct {
			Case, Class, User, Result, Detail string
			Seconds                           float64
		} `json:"results"`
		Passed, Failed, NotApplicable int
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	require.Equal(t, "bwrap", got.Backend)
	require.Len(t, got.Results, 4)
	require.Equal(t, "FAIL", got.Results[1].Result)
	require.Equal(t, []int{2, 1, 1}, []int{got.Passed, got.Failed, got.NotApplicable})
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Class   string `xml:"classname,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestReportJUnit(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteJUnit(&b))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), b.String())
	require.Equal(t, []int{4, 1, 1}, []int{doc.Tests, doc.Failures, doc.Skipped})
	require.Len(t, doc.Suites, 2)
	require.Equal(t, 3, doc.Suites[0].Tests)
	f := doc.Suites[0].Cases[1].Failure
	require.NotNil(t, f)
	require.Contains(t, f.Text, "<of> the \"sandbox\" & more")
	require.NotNil(t, doc.Suites[0].Cases[2].Skipped)
	require.True(t, strings.HasPrefix(doc.Suites[0].Cases[2].Skipped.Message, "not applicable"))
}

func TestReportTable(t *testing.T) {
	var b bytes.Buffer
	sampleReport().WriteTable(&b)
	out := b.String()
	require.Contains(t, out, "CASE")
	require.Contains(t, out, "--- FAIL: deny-read-file (root")
	require.Contains(t, out, "verify: 2 passed, 1 failed, 1 not applicable")
}

// TestVerifyCommand runs 'cordon verify' on a few cases and parses what it
// writes: exit status, table, --json and --junit.
func TestVerifyCommand(t *testing.T) {
	testenv.RequireBackend(t, testenv.NativeBackend())
	bin := cordonBinary(t)
	dir := t.TempDir()
	junit := filepath.Join(dir, "report.xml")
	cmd := exec.Command(bin, "verify", "--run", "^(work-files|deny-read-file|undo-umount-mask)$", "--json", "--junit", junit)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	var rep Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
	require.Zero(t, rep.Failed)
	require.NotZero(t, rep.Passed)
	require.Contains(t, stderr.String(), "verify: ")
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b, &doc))
	require.Equal(t, len(rep.Results), doc.Tests)
	// Both name the cordon that ran them.
	require.NotEmpty(t, rep.Cordon.Version)
	require.NotEmpty(t, rep.Cordon.Platform)
	require.NotEmpty(t, doc.Suites[0].Properties)
	require.Equal(t, "cordon.version", doc.Suites[0].Properties[0].Name)
	require.Equal(t, rep.Cordon.Version, doc.Suites[0].Properties[0].Value)

	// A filter that matches nothing is a usage error, not a green run.
	err = exec.Command(bin, "verify", "--run", "^no-such-case$").Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode())
}

// TestVerifyInterrupted sends 'cordon verify' SIGTERM, and SIGINT, once
// its progress shows the second case done: it exits 128+N, reports every
// case it did not run to its end as not run (none failed) in --json and
// --junit alike, and leaves no fixture behind.
func TestVerifyInterrupted(t *testing.T) {
	testenv.RequireBackend(t, testenv.NativeBackend())
	bin := cordonBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		name := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT"}[sig]
		t.Run(name, func(t *testing.T) {
			// Fixtures go to TMPDIR: one of the test's own, which every
			// user of the run can traverse, to find what is left.
			tmp, err := os.MkdirTemp("", "cordon-verify-interrupted-")
			require.NoError(t, err)
			t.Cleanup(func() { RemoveFixture(tmp) })
			require.NoError(t, os.Chmod(tmp, 0o755))
			junit := filepath.Join(t.TempDir(), "report.xml")
			cmd := exec.Command(bin, "verify", "--run", "^(work-files|work-tmp|work-read-system|work-carve-out|work-pipes-devices)$",
				"--workers", "1", "--json", "--junit", junit)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			progress, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			var stderr strings.Builder
			lines := bufio.NewScanner(progress)
			for lines.Scan() {
				stderr.WriteString(lines.Text() + "\n")
				if strings.HasPrefix(lines.Text(), "[  2/") {
					require.NoError(t, cmd.Process.Signal(sig))
					break
				}
			}
			io.Copy(&stderr, progress)
			err = cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
			require.Equal(t, 128+int(sig), ee.ExitCode(), "stderr: %s", stderr.String())

			var rep Report
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
			require.Equal(t, "interrupted by "+name, rep.Interrupted)
			require.Zero(t, rep.Failed, stdout.String())
			require.GreaterOrEqual(t, rep.Passed+rep.NA, 2, stdout.String())
			require.NotZero(t, rep.NotRun, stdout.String())
			require.Equal(t, len(rep.Results), rep.Passed+rep.NA+rep.NotRun)
			for _, r := range rep.Results {
				if r.Outcome == NotRun {
					require.Equal(t, "not run: interrupted by "+name, r.Detail)
				}
			}
			b, err := os.ReadFile(junit)
			require.NoError(t, err)
			var doc junitDoc
			require.NoError(t, xml.Unmarshal(b, &doc), string(b))
			require.Equal(t, []int{len(rep.Results), 0, rep.NA + rep.NotRun}, []int{doc.Tests, doc.Failures, doc.Skipped})

			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			require.Empty(t, left, "fixtures left in %s", tmp)
		})
	}
}

// TestReportWallTimes: cases of two users run side by side; each suite's
// time is its cases' span (not their sum), the whole the run's wall time,
// each case its own.
func TestReportWallTimes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := &Report{Backend: "native", Users: []string{"root", "cordon-verify"}, Elapsed: 2500 * time.Millisecond}
	r.Results = []Result{
		{Case: "a", User: "root", Outcome: Pass, Started: at(0), Elapsed: 2000 * time.Millisecond, Seconds: 2},
		{Case: "b", User: "root", Outcome: Pass, Started: at(500), Elapsed: 1000 * time.Millisecond, Seconds: 1},
		{Case: "a", User: "cordon-verify", Outcome: Pass, Started: at(1000), Elapsed: 1200 * time.Millisecond, Seconds: 1.2},
		{Case: "b", User: "cordon-verify", Outcome: NotRun, Detail: "not run: interrupted"},
	}
	var b bytes.Buffer
	require.NoError(t, r.WriteJUnit(&b))
	var doc struct {
		Time   string `xml:"time,attr"`
		Suites []struct {
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Cases     []struct {
				Time string `xml:"time,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), b.String())
	require.Equal(t, "2.500", doc.Time)
	require.Equal(t, []string{"2.000", "1.200"}, []string{doc.Suites[0].Time, doc.Suites[1].Time})
	require.Equal(t, "2026-01-02T03:04:05", doc.Suites[0].Timestamp)
	require.Equal(t, []string{"2.000", "1.000"}, []string{doc.Suites[0].Cases[0].Time, doc.Suites[0].Cases[1].Time})
}

// TestReportFullDetail: a failure whose reason is its last line (as a
// command's stderr ends with why it failed), after much output: JSON and
// JUnit keep every line; the table keeps the first and the last whole and
// says what it left out.
func TestReportFullDetail(t *testing.T) {
	var d strings.Builder
	d.WriteString("host: the build did not run\nexit 1\nstderr:\n")
	for i := range 500 {
		fmt.Fprintf(&d, "noise line %d %s\n", i, strings.Repeat("x", 60))
	}
	d.WriteString("cordon: the decisive reason, in full")
	detail := d.String()
	r := &Report{Backend: "bwrap", Users: []string{"root"}, Failed: 1,
		Results: []Result{{Case: "work-build", Class: Work.String(), User: "root", Outcome: Fail, Detail: detail}}}

	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var got Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &got))
	require.Equal(t, detail, got.Results[0].Detail)

	var ju bytes.Buffer
	require.NoError(t, r.WriteJUnit(&ju))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(ju.Bytes(), &doc))
	require.Equal(t, detail, doc.Suites[0].Cases[0].Failure.Text)
	require.Equal(t, "host: the build did not run", doc.Suites[0].Cases[0].Failure.Message)

	var tb bytes.Buffer
	r.WriteTable(&tb)
	out := tb.String()
	require.Contains(t, out, "    host: the build did not run\n")
	require.Contains(t, out, "    cordon: the decisive reason, in full\n")
	require.Contains(t, out, "lines (")
	require.NotContains(t, out, "noise line 250 ")
	require.Less(t, strings.Count(out, "\n"), 100)
}

// TestClipKeepsTail: a command's output beyond clip's bound keeps its
// head and its last line (where it says why it ended), cut at line ends.
func TestClipKeepsTail(t *testing.T) {
	s := "first line\n" + strings.Repeat(strings.Repeat("y", 99)+"\n", 2000) + "cordon: why it ended\n"
	c := clip(s)
	require.True(t, strings.HasPrefix(c, "first line\n"))
	require.True(t, strings.HasSuffix(c, "\ncordon: why it ended\n"))
	require.Contains(t, c, " bytes left out ...]\n")
	require.Less(t, len(c), clipHead+clipTail+100)
	for _, l := range strings.Split(strings.TrimSuffix(c, "\n"), "\n") {
		require.True(t, l == "first line" || l == "cordon: why it ended" || len(l) == 99 || strings.HasPrefix(l, "[... "), "line cut: %q", l)
	}
	short := "a\nb\n"
	require.Equal(t, short, clip(short))
}
