package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

// VerifyError names the first bad record (1-based) of a log.
type VerifyError struct {
	Path   string
	Record uint64
	Reason string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("audit log %s: record %d: %s", e.Path, e.Record, e.Reason)
}

// Verify checks every record's hash and link and the anchor, and returns
// the records read. A tampered log yields a *VerifyError.
func Verify(path string) ([]Record, error) {
	head, err := ReadHead(HeadPath(path))
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w (the anchor is required)", path, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	bad := func(n uint64, format string, a ...any) error {
		return &VerifyError{Path: path, Record: n, Reason: fmt.Sprintf(format, a...)}
	}
	var recs []Record
	prev := ""
	for n := uint64(1); len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return recs, bad(n, "cut off: the line has no end")
		}
		text := data[:i]
		data = data[i+1:]
		var l line
		if err := json.Unmarshal(text, &l); err != nil || len(l.Record) == 0 {
			return recs, bad(n, "not a record line: %s", errText(err))
		}
		sum := sha256.Sum256(l.Record)
		if hex.EncodeToString(sum[:]) != l.Hash {
			return recs, bad(n, "contents do not match its hash: the record was edited")
		}
		var r Record
		if err := json.Unmarshal(l.Record, &r); err != nil {
			return recs, bad(n, "malformed record: %v", err)
		}
		if r.Seq != n {
			return recs, bad(n, "has sequence number %d where %d was expected: a record was inserted or removed", r.Seq, n)
		}
		if r.Prev != prev {
			return recs, bad(n, "does not chain to record %d: a record was inserted, removed or reordered", n-1)
		}
		recs = append(recs, r)
		prev = l.Hash
	}
	n := uint64(len(recs))
	switch {
	case head.Count > n:
		return recs, bad(n+1, "missing: the anchor counts %d records but the log ends after %d (cut short)", head.Count, n)
	case head.Count < n:
		return recs, bad(head.Count+1, "not covered by the anchor, which counts %d records: appended outside cordon", head.Count)
	case head.Hash != prev:
		return recs, bad(n, "does not match the anchor's last hash: the log was rewritten")
	}
	return recs, nil
}

func errText(err error) string {
	if err == nil {
		return "no record"
	}
	return err.Error()
}
