package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// testKey is the key of the logs of these tests.
var testKey = func() *Key {
	k, err := NewKey()
	if err != nil {
		panic(err)
	}
	return k
}()

// tempDir is t.TempDir by its real path: logs are never opened through a
// symlink (macOS's /var is one).
func tempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func writeLog(t *testing.T, n int) string {
	t.Helper()
	return writeLogKey(t, n, testKey)
}

func writeLogKey(t *testing.T, n int, k *Key) string {
	t.Helper()
	path := filepath.Join(tempDir(t), "audit.jsonl")
	l, err := Open(path, k)
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, l.Append(KindRequest, "t", map[string]int{"i": i}))
	}
	return path
}

func lines(t *testing.T, path string) [][]byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

func rewrite(t *testing.T, path string, ls [][]byte) {
	require.NoError(t, os.WriteFile(path, bytes.Join(ls, nil), 0o600))
}

func TestAppendAndVerify(t *testing.T) {
	path := writeLog(t, 5)
	recs, err := Verify(path, testKey)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	require.Equal(t, uint64(5), recs[4].Seq)
	require.JSONEq(t, `{"i":4}`, string(recs[4].Data))
	head, err := ReadAnchor(path)
	require.NoError(t, err)
	require.Equal(t, uint64(5), head.Count)
}

func TestVerifyNamesFirstBadRecord(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, path string)
		record uint64
		says   string
	}{
		{"edited", func(t *testing.T, path string) {
			ls := lines(t, path)
			ls[2] = bytes.Replace(ls[2], []byte(`"i":2`), []byte(`"i":9`), 1)
			rewrite(t, path, ls)
		}, 3, "edited"},
		{"mac swapped", func(t *testing.T, path string) {
			ls := lines(t, path)
			ls[1] = bytes.Replace(ls[1], []byte(`"seq":2`), []byte(`"seq":7`), 1)
			rewrite(t, path, ls)
		}, 2, "edited"},
		{"removed", func(t *testing.T, path string) {
			ls := lines(t, path)
			rewrite(t, path, append(ls[:1:1], ls[2:]...))
		}, 2, "inserted or removed"},
		{"inserted copy", func(t *testing.T, path string) {
			ls := lines(t, path)
			rewrite(t, path, append(ls[:2:2], append([][]byte{ls[0]}, ls[2:]...)...))
		}, 3, "inserted or removed"},
		{"reordered", func(t *testing.T, path string) {
			ls := lines(t, path)
			ls[1], ls[2] = ls[2], ls[1]
			rewrite(t, path, ls)
		}, 2, "inserted or removed"},
		{"cut short", func(t *testing.T, path string) {
			rewrite(t, path, lines(t, path)[:3])
		}, 4, "cut short"},
		{"cut mid-line", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			require.NoError(t, os.WriteFile(path, b[:len(b)-10], 0o600))
		}, 5, "cut off"},
		{"appended behind cordon's back", func(t *testing.T, path string) {
			other := writeLog(t, 6)
			rewrite(t, path, append(lines(t, path), lines(t, other)[5]))
		}, 6, "does not chain"},
		{"garbage line", func(t *testing.T, path string) {
			ls := lines(t, path)
			ls[0] = []byte("hello\n")
			rewrite(t, path, ls)
		}, 1, "not a record line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLog(t, 5)
			tt.tamper(t, path)
			_, err := Verify(path, testKey)
			var ve *VerifyError
			require.True(t, errors.As(err, &ve), "got %v", err)
			require.Equal(t, tt.record, ve.Record, ve.Error())
			require.Contains(t, ve.Error(), tt.says)
		})
	}
}

// A whole chain recomputed by someone without the anchor still disagrees
// with it.
func TestVerifyRewrittenChain(t *testing.T) {
	path := writeLog(t, 3)
	forged := writeLog(t, 3)
	require.NoError(t, os.Rename(forged, path))
	_, err := Verify(path, testKey)
	var ve *VerifyError
	require.True(t, errors.As(err, &ve), "got %v", err)
	require.Equal(t, uint64(3), ve.Record)
}

func TestVerifyMissingAnchor(t *testing.T) {
	path := writeLog(t, 2)
	require.NoError(t, os.Remove(HeadPath(path)))
	_, err := Verify(path, testKey)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestAppendRefusesTamperedLog(t *testing.T) {
	path := writeLog(t, 2)
	rewrite(t, path, lines(t, path)[:1])
	l, err := Open(path, testKey)
	require.NoError(t, err)
	err = l.Append(KindResult, "t", nil)
	require.ErrorContains(t, err, "anchor says")
}

func TestAppendFailureLeavesNothing(t *testing.T) {
	path := writeLog(t, 2)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	l, err := Open(path, testKey)
	require.NoError(t, err)
	require.Error(t, l.Append(KindRequest, "t", func() {})) // not marshalable
	// The anchor cannot be written (it is rewritten in place, so a
	// directory that is not writable would not stop the append).
	if os.Getuid() != 0 {
		require.NoError(t, os.Chmod(HeadPath(path), 0o400))
		t.Cleanup(func() { os.Chmod(HeadPath(path), 0o600) })
		require.ErrorContains(t, l.Append(KindRequest, "t", 1), "anchor")
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
	_, err = Verify(path, testKey)
	require.NoError(t, err)
}

func TestAppendConcurrent(t *testing.T) {
	path := filepath.Join(tempDir(t), "audit.jsonl")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Open(path, testKey) // separate Logs, as separate hook processes would be
			require.NoError(t, err)
			for range 10 {
				require.NoError(t, l.Append(KindRequest, strings.Repeat("x", i), i))
			}
		}()
	}
	wg.Wait()
	recs, err := Verify(path, testKey)
	require.NoError(t, err)
	require.Len(t, recs, 80)
}
