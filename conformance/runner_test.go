package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// noExecutor is an executor for cases that launch nothing.
type noExecutor struct{}

func (noExecutor) Name() string    { return "none" }
func (noExecutor) Backend() string { return "none" }
func (noExecutor) Helper() string  { return "" }
func (noExecutor) Exec(context.Context, User, Launch) (Output, error) {
	return Output{}, errors.New("no executor")
}

// TestRunInterrupted: a run whose context ends while a case runs reports
// that case, and every case it had not started, not run, never failed,
// whatever the case made of its launches being stopped; what ended
// before stays as it was. The moment is forced: the context ends when
// the second case has passed, with the first still running.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	started := make(chan struct{})
	cases := []Case{
		{Name: "in-flight", Class: Work, Summary: "s", Run: func(h *H) {
			close(started)
			<-h.ctx.Done()
			h.Errorf("launch: timed out") // what a launch stopped under it says
		}},
		{Name: "quick", Class: Work, Summary: "s", Run: func(h *H) { <-started }},
		{Name: "later", Class: Direct, Summary: "s", Run: func(h *H) { h.Errorf("must not run") }},
		{Name: "last", Class: Direct, Summary: "s", Run: func(h *H) { h.Errorf("must not run") }},
	}
	var progress []string
	rep, err := Run(ctx, Config{Executor: noExecutor{}, Users: []User{Invoker()}, Cases: cases, Workers: 2,
		BaseDir: t.TempDir(),
		Progress: func(done, total int, r Result) {
			progress = append(progress, r.Case)
			if r.Case == "quick" {
				cancel(errors.New("interrupted by SIGTERM"))
			}
		}})
	require.NoError(t, err)
	require.Equal(t, []string{"quick"}, progress)
	got := map[string]Outcome{}
	for _, r := range rep.Results {
		got[r.Case] = r.Outcome
		if r.Outcome == NotRun {
			require.Equal(t, "not run: interrupted by SIGTERM", r.Detail)
		}
	}
	require.Equal(t, map[string]Outcome{"in-flight": NotRun, "quick": Pass, "later": NotRun, "last": NotRun}, got)
	require.Equal(t, []int{1, 0, 0, 3}, []int{rep.Passed, rep.Failed, rep.NA, rep.NotRun})
	require.Equal(t, "interrupted by SIGTERM", rep.Interrupted)
	require.False(t, rep.OK())

	var table bytes.Buffer
	rep.WriteTable(&table)
	require.Contains(t, table.String(), "1 passed, 0 failed, 0 not applicable, 3 not run (interrupted by SIGTERM)")
	require.NotContains(t, table.String(), "FAIL")
	var js struct {
		NotRun      int    `json:"notRun"`
		Interrupted string `json:"interrupted"`
		Results     []struct{ Result string }
	}
	var b bytes.Buffer
	require.NoError(t, rep.WriteJSON(&b))
	require.NoError(t, json.Unmarshal(b.Bytes(), &js))
	require.Equal(t, 3, js.NotRun)
	require.Equal(t, "interrupted by SIGTERM", js.Interrupted)
	require.Equal(t, "not run", js.Results[0].Result)
	b.Reset()
	require.NoError(t, rep.WriteJUnit(&b))
	var doc junitDoc
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), b.String())
	require.Equal(t, []int{4, 0, 3}, []int{doc.Tests, doc.Failures, doc.Skipped})
	require.Equal(t, "not run: interrupted by SIGTERM", doc.Suites[0].Cases[0].Skipped.Message)
}

// TestRunInterruptedStraggler: a case that does not stop when the run's
// context ends is left behind after the grace, reported not run; the run
// does not wait for it.
func TestRunInterruptedStraggler(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	release, ended := make(chan struct{}), make(chan struct{})
	cases := []Case{{Name: "straggler", Class: Work, Summary: "s", Run: func(h *H) {
		defer close(ended)
		cancel(errors.New("interrupted by SIGINT"))
		<-release // deaf to the context
	}}}
	rep, err := Run(ctx, Config{Executor: noExecutor{}, Users: []User{Invoker()}, Cases: cases, Workers: 1,
		BaseDir: t.TempDir(), Grace: 10 * time.Millisecond})
	close(release)
	<-ended
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	require.Equal(t, NotRun, rep.Results[0].Outcome)
	require.Equal(t, 1, rep.NotRun)
	require.Equal(t, "interrupted by SIGINT", rep.Interrupted)
}
