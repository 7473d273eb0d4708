package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/detect"
	"github.com/cordon-sandbox/cordon/internal/state"
)

// unusableBackend is a backend that cannot work on this OS.
func unusableBackend() string {
	if runtime.GOOS == "darwin" {
		return "bwrap"
	}
	return "seatbelt"
}

// TestVerifyUnusableBackendReports: with no usable backend, --json and
// --junit still get a well-formed report that says why (there was only a
// line on stderr).
func TestVerifyUnusableBackendReports(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	t.Setenv(detect.EnvSandbox, "")
	junit := filepath.Join(t.TempDir(), "j.xml")
	code, out, errs := runCLI(t, "", "verify", "--backend", unusableBackend(), "--json", "--junit", junit)
	require.Equal(t, exitFail, code, errs)
	require.Contains(t, errs, "is not usable here")

	var rep struct {
		Backend string `json:"backend"`
		Results []struct {
			Case, Result, Detail string
		} `json:"results"`
		Passed, Failed int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, unusableBackend(), rep.Backend)
	require.Equal(t, 0, rep.Passed)
	require.Equal(t, 1, rep.Failed)
	require.Len(t, rep.Results, 1)
	require.Equal(t, "FAIL", rep.Results[0].Result)
	require.Contains(t, rep.Results[0].Detail, "is not usable here")

	b, err := os.ReadFile(junit)
	require.NoError(t, err, "no JUnit file")
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &doc), "%s", b)
	require.Equal(t, 1, doc.Failures)
	require.NotNil(t, doc.Suites[0].Cases[0].Failure)
	require.Contains(t, doc.Suites[0].Cases[0].Failure.Message, "is not usable here")
	entries, err := os.ReadDir(filepath.Dir(junit))
	require.NoError(t, err)
	require.Len(t, entries, 1, "a temporary file was left behind")
}

// TestVerifyJUnitCheckedFirst: a --junit path that cannot be written is a
// cordon error found before anything runs, not after the suite.
func TestVerifyJUnitCheckedFirst(t *testing.T) {
	t.Setenv(state.EnvDir, t.TempDir())
	missing := filepath.Join(t.TempDir(), "nonexistent", "j.xml")
	for _, name := range []string{missing, t.TempDir()} {
		code, out, errs := runCLI(t, "", "verify", "--backend", unusableBackend(), "--json", "--junit", name)
		require.Equal(t, exitCordonError, code, errs)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errs, "cordon verify: --junit "+name+": "), errs)
	}
	_, err := os.Stat(filepath.Dir(missing))
	require.ErrorIs(t, err, os.ErrNotExist)
}
