package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The anchor beside a log is within reach of whatever can write the log:
// something that cannot forge a MAC can still delete the log and its
// anchor (and cordon would start a new, valid log), or put back a copy of
// both it saved earlier (a valid, shorter history). So cordon also keeps,
// for every log outside its state directory, its own copy of the anchor in
// <state>/audit/anchors, which no sandbox can reach, and an append or a
// verify that finds the log behind that copy says so.

// keptAnchor is cordon's own copy of a log's anchor.
type keptAnchor struct {
	Path string `json:"path"`
	Head Head   `json:"head"`
}

// KeptAnchorPath is where cordon keeps its copy of the anchor of the log
// at path (absolute), in the current user's state directory.
func KeptAnchorPath(path string) string {
	return filepath.Join(state.Path(), state.Audit, "anchors", keptName(path))
}

func keptName(path string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(path)))
	return hex.EncodeToString(sum[:16])
}

// keepsAnchor reports whether cordon keeps its own anchor for the log:
// every log outside its state directory (one inside is out of reach
// already).
func (l *Log) keepsAnchor() bool { return !testhook.AuditNoKeptAnchor && len(l.Protect()) > 0 }

// readKept reads cordon's anchor of path; nil when it keeps none.
func readKept(path string) (*keptAnchor, error) {
	b, err := os.ReadFile(KeptAnchorPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cordon's own anchor of %s: %w", path, err)
	}
	var k keptAnchor
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("read cordon's own anchor of %s (%s): %w", path, KeptAnchorPath(path), err)
	}
	return &k, nil
}

// writeKept replaces cordon's anchor of path with h.
func writeKept(path string, h Head) error {
	dir, err := state.Sub(state.Audit)
	if err == nil {
		err = state.Private(filepath.Join(dir, "anchors"))
	}
	if err != nil {
		return fmt.Errorf("keep the anchor of %s: %w", path, err)
	}
	b, err := json.Marshal(keptAnchor{Path: path, Head: h})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFileSync(KeptAnchorPath(path), b); err != nil {
		return fmt.Errorf("keep the anchor of %s: %w", path, err)
	}
	return nil
}

// Forget drops cordon's own anchor of the log at path, so that a log the
// user removed on purpose can start again there. It reports whether there
// was one.
func Forget(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, fmt.Errorf("forget %q: %w", path, err)
	}
	err = os.Remove(KeptAnchorPath(abs))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("forget %s: %w", path, err)
	}
	return true, nil
}

// behindErr is the refusal for a log that does not continue from cordon's
// own anchor k.
func behindErr(path string, k Head, count uint64) error {
	return fmt.Errorf("the log does not continue where cordon left it: cordon's own anchor (%s) counts %d records, the log %d: "+
		"it was removed, replaced, cut short or rolled back. Check it with 'cordon audit verify %s'; "+
		"to start a new log there on purpose, move the old one aside and run 'cordon audit forget %s'",
		KeptAnchorPath(path), k.Count, count, path, path)
}

// continues checks that the log f, whose own anchor is head, continues
// from cordon's anchor k: the same point, or one record past it (an append
// that stopped between writing the log's anchor and cordon's).
func (l *Log) continues(f *os.File, head, k Head) error {
	switch {
	case head.Count == k.Count && head.Hash == k.Hash:
		return nil
	case head.Count == k.Count+1:
		last, err := lastLine(f, head.Size)
		if err != nil {
			return behindErr(l.path, k, head.Count)
		}
		var r Record
		if json.Unmarshal(last.Record, &r) == nil && r.Prev == k.Hash && last.MAC == head.Hash &&
			hmac.Equal([]byte(l.key.mac("cordon audit record", last.Record)), []byte(last.MAC)) {
			return nil
		}
	}
	return behindErr(l.path, k, head.Count)
}

// lastLine reads the last line of the first size bytes of f.
func lastLine(f *os.File, size int64) (line, error) {
	const max = 32 << 20
	start := max64(0, size-max)
	b := make([]byte, size-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return line{}, err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 && start > 0 {
		return line{}, errors.New("last line too long")
	}
	var l line
	err := json.Unmarshal(b[i+1:], &l)
	return l, err
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// checkKept is Verify's comparison with cordon's own anchor of path, when
// it keeps one under key; recs are the records read.
func checkKept(path string, key *Key, recs []Record, last string) error {
	if testhook.AuditNoKeptAnchor {
		return nil
	}
	k, err := readKept(path)
	if err != nil || k == nil || k.Head.Key != key.ID() || k.Path != path {
		return err
	}
	n := uint64(len(recs))
	bad := func(rec uint64, format string, a ...any) error {
		return &VerifyError{Path: path, Record: rec, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case n < k.Head.Count:
		return bad(n+1, "missing: cordon's own anchor on this machine (%s) counts %d records, the log and its anchor only %d: the log was cut short, replaced or rolled back", KeptAnchorPath(path), k.Head.Count, n)
	case n == k.Head.Count && last != k.Head.Hash:
		return bad(n, "is not the record cordon wrote there (its own anchor, %s, has another MAC): the log was replaced", KeptAnchorPath(path))
	case n > k.Head.Count && k.Head.Count > 0 && recs[k.Head.Count].Prev != k.Head.Hash:
		return bad(k.Head.Count, "is not the record cordon wrote there (its own anchor, %s, has another MAC): the log was replaced", KeptAnchorPath(path))
	}
	return nil
}
