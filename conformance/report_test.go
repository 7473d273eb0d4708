package conformance

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
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

	// A filter that matches nothing is a usage error, not a green run.
	err = exec.Command(bin, "verify", "--run", "^no-such-case$").Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode())
}
