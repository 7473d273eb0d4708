package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTidyRecords: records of roots that are gone and that no launch used
// for a month go (with the guard's record of the same root), and so do
// records no launch can read and temporary files a killed write left;
// a record of a root still there stays however old, and one a launch used
// within the month stays though its root is gone.
func TestTidyRecords(t *testing.T) {
	// A loaded machine must not cut the tidy short: its bounds in time
	// are for launches, not for what this test judges.
	defer func(b, l time.Duration) { recordTidyBudget, rootLookLimit = b, l }(recordTidyBudget, rootLookLimit)
	recordTidyBudget, rootLookLimit = time.Hour, time.Hour
	dir := t.TempDir()
	here := t.TempDir()
	gone := filepath.Join(t.TempDir(), "gone")
	write := func(name string, b []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	rec := func(root string) []byte { return encodeScan(scanRecord{V: scanVersion, Root: root}) }
	write(recordName(here)+".scan", rec(here))
	write(recordName(gone)+".scan", rec(gone))
	write(recordName(gone)+".guard", []byte(guardHeader+"\n"))
	write("orphan.guard", []byte(guardHeader+"\n"))
	write("old.scan", []byte("cordon-scan 1\n"+gone+"\x00"))
	write(".x.scan.123.tmp", nil)
	write("notes", nil)
	fresh := filepath.Join(t.TempDir(), "fresh")
	write(recordName(fresh)+".scan", rec(fresh))

	now := time.Now().Add(recordKeep + time.Hour)
	used := now.Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, recordName(fresh)+".scan"), used, used))
	got := tidyRecords(dir, now)
	slices.Sort(got)
	want := []string{".x.scan.123.tmp", "old.scan", "orphan.guard", recordName(gone) + ".guard", recordName(gone) + ".scan"}
	slices.Sort(want)
	assert.Equal(t, want, got)
	for _, n := range []string{recordName(here) + ".scan", recordName(fresh) + ".scan", "notes"} {
		assert.FileExists(t, filepath.Join(dir, n))
	}
	write(recordName(gone)+".scan", rec(gone))
	assert.Nil(t, tidyRecords(dir, now), "once a day")
	assert.Equal(t, []string{recordName(gone) + ".scan"}, tidyRecords(dir, now.Add(recordTidyEvery+time.Hour)))
}

// TestRecordUseTouches: a launch that reads a root's record marks it
// used, so the tidy keeps it a month from then.
func TestRecordUseTouches(t *testing.T) {
	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0 // the first scan is the answer: the second reads only
	ws, cache := t.TempDir(), t.TempDir()
	cachedScan(ws, cache)
	file := filepath.Join(cache, recordName(ws)+".scan")
	past := time.Now().Add(-2 * recordKeep)
	require.NoError(t, os.Chtimes(file, past, past))
	cachedScan(ws, cache)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute)
}
