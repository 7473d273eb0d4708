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
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/safefs"
)

// VerifyError names the first bad record (1-based) of a log; Record 0 is
// the anchor.
type VerifyError struct {
	Path   string
	Record uint64
	Reason string
}

func (e *VerifyError) Error() string {
	if e.Record == 0 {
		return fmt.Sprintf("audit log %s: anchor %s: %s", e.Path, HeadPath(e.Path), e.Reason)
	}
	return fmt.Sprintf("audit log %s: record %d: %s", e.Path, e.Record, e.Reason)
}

// ErrUnkeyed is wrapped by Verify's error for a log of format 1, whose
// chain has no secret: anyone who could write it could have rewritten it
// and re-chained it, so it proves nothing and is never reported verified.
var ErrUnkeyed = errors.New("unkeyed log (format 1)")

// KeyError says a log was written with another key than the one given.
type KeyError struct {
	Path          string
	LogKey, Given string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("audit log %s was written with audit key %s, not with key %s: verify it with the key it was written with (--key FILE, from 'cordon audit key export' on the machine that wrote it)", e.Path, e.LogKey, e.Given)
}

// Verify checks every record's MAC and link and the anchor under key, and
// returns the records read. A tampered log yields a *VerifyError, a log
// written with another key a *KeyError, a format 1 log an error wrapping
// ErrUnkeyed (with the chain's own verdict). The log and its anchor are
// opened like Append opens them: never through a symlink.
func Verify(path string, key *Key) ([]Record, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("verify %q: %w", path, err)
	}
	// The log stays locked until cordon's own anchor has been compared
	// too: an append in between would move that anchor past what was read.
	head, data, release, err := readLocked(path, abs)
	if err != nil {
		return nil, err
	}
	defer release()
	if head.V == 0 {
		return unkeyedVerdict(path, data, head)
	}
	if head.V != Format {
		return nil, fmt.Errorf("verify %s: format %d is not one this cordon knows (%d)", path, head.V, Format)
	}
	if key == nil {
		return nil, fmt.Errorf("verify %s: no audit key given", path)
	}
	if head.Key != key.ID() {
		return nil, &KeyError{Path: path, LogKey: head.Key, Given: key.ID()}
	}
	recs, last, err := verifyChain(path, data, key)
	if err != nil {
		return recs, err
	}
	if !hmac.Equal([]byte(head.sum(key)), []byte(head.MAC)) {
		return recs, &VerifyError{Path: path, Record: 0, Reason: "its MAC does not match under this key: it was edited, or forged by someone without the key"}
	}
	if err := anchored(path, head, recs, last); err != nil {
		return recs, err
	}
	return recs, checkKept(abs, key, recs, last)
}

// readLocked opens the log at abs (named path in errors) and its anchor,
// both regular files reached without a symlink, takes the log's shared
// lock, and reads both. release releases the lock and closes the log.
func readLocked(path, abs string) (head Head, data []byte, release func(), err error) {
	dir, err := openDir(filepath.Dir(abs))
	if err != nil {
		return Head{}, nil, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	defer dir.Close()
	f, err := openAt(dir, filepath.Base(abs), rdonly, false)
	if err != nil {
		return Head{}, nil, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	fail := func(err error) (Head, []byte, func(), error) {
		f.Close()
		return Head{}, nil, nil, err
	}
	if err := checkFile(f, false); err != nil {
		return fail(fmt.Errorf("verify: %w", err))
	}
	lk, err := lock(abs, false)
	if err != nil {
		return fail(fmt.Errorf("verify: lock %s: %w", path, err))
	}
	release = func() {
		unlock(lk)
		f.Close()
	}
	if head, data, err = readBoth(path, dir, f, abs); err != nil {
		release()
		return Head{}, nil, nil, err
	}
	return head, data, release, nil
}

// readBoth reads the anchor of the log abs, opened in dir, and the log f.
func readBoth(path string, dir *safefs.Root, f *os.File, abs string) (Head, []byte, error) {
	hf, err := openAt(dir, filepath.Base(HeadPath(abs)), rdonly, false)
	if err != nil {
		return Head{}, nil, fmt.Errorf("verify %s: %w (the anchor is required)", path, err)
	}
	defer hf.Close()
	if err := checkFile(hf, false); err != nil {
		return Head{}, nil, fmt.Errorf("verify: anchor: %w", err)
	}
	head, err := readHead(hf)
	if err != nil {
		return Head{}, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return Head{}, nil, fmt.Errorf("verify %s: %w", path, err)
	}
	return head, data, nil
}

// unkeyedVerdict is Verify's answer for a log of format 1: never
// verified, with what its plain chain says.
func unkeyedVerdict(path string, data []byte, head Head) ([]Record, error) {
	recs, err := verifyUnkeyed(path, data, head)
	if err != nil {
		return recs, fmt.Errorf("%w: %s: its unkeyed chain is broken too: %w", ErrUnkeyed, path, err)
	}
	return recs, fmt.Errorf("%w: %s: its %d records chain by plain SHA-256, which anyone who could write the log can recompute: not verified", ErrUnkeyed, path, len(recs))
}

// verifyChain checks each record line of data under key: its format and
// key, its MAC, its sequence number and its link to the one before. It
// returns the records up to the first bad one and the last record's MAC.
func verifyChain(path string, data []byte, key *Key) (recs []Record, last string, err error) {
	bad := func(n uint64, format string, a ...any) error {
		return &VerifyError{Path: path, Record: n, Reason: fmt.Sprintf(format, a...)}
	}
	for n := uint64(1); len(data) > 0; n++ {
		l, rest, err := nextLine(data)
		if err != nil {
			return recs, last, bad(n, "%v", err)
		}
		data = rest
		if l.V != Format || l.Key != key.ID() {
			return recs, last, bad(n, "is of format %d with key %q, not format %d with key %s: it was not written with this log", l.V, l.Key, Format, key.ID())
		}
		if !hmac.Equal([]byte(key.mac("cordon audit record", l.Record)), []byte(l.MAC)) {
			return recs, last, bad(n, "its MAC does not match its contents under this key: the record was edited, or forged by someone without the key")
		}
		r, err := link(l.Record, n, last)
		if err != nil {
			return recs, last, bad(n, "%v", err)
		}
		recs = append(recs, r)
		last = l.MAC
	}
	return recs, last, nil
}

// nextLine splits the first line off data and decodes it.
func nextLine(data []byte) (line, []byte, error) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return line{}, nil, errors.New("cut off: the line has no end")
	}
	var l line
	if err := json.Unmarshal(data[:i], &l); err != nil || len(l.Record) == 0 {
		return line{}, nil, fmt.Errorf("not a record line: %s", errText(err))
	}
	return l, data[i+1:], nil
}

// link decodes record n and checks its place in the chain.
func link(raw json.RawMessage, n uint64, prev string) (Record, error) {
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("malformed record: %v", err)
	}
	if r.Seq != n {
		return r, fmt.Errorf("has sequence number %d where %d was expected: a record was inserted or removed", r.Seq, n)
	}
	if r.Prev != prev {
		return r, fmt.Errorf("does not chain to record %d: a record was inserted, removed or reordered", n-1)
	}
	return r, nil
}

// anchored checks the anchor against the records read.
func anchored(path string, head Head, recs []Record, last string) error {
	n := uint64(len(recs))
	bad := func(n uint64, format string, a ...any) error {
		return &VerifyError{Path: path, Record: n, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case head.Count > n:
		return bad(n+1, "missing: the anchor counts %d records but the log ends after %d (cut short)", head.Count, n)
	case head.Count < n:
		return bad(head.Count+1, "not covered by the anchor, which counts %d records: appended outside cordon", head.Count)
	case head.Hash != last:
		return bad(n, "does not match the anchor's last MAC: the log was rewritten")
	}
	return nil
}

// verifyUnkeyed checks a format 1 log's plain chain, for the report only.
func verifyUnkeyed(path string, data []byte, head Head) ([]Record, error) {
	var recs []Record
	prev := ""
	for n := uint64(1); len(data) > 0; n++ {
		l, rest, err := nextLine(data)
		if err != nil {
			return recs, &VerifyError{Path: path, Record: n, Reason: err.Error()}
		}
		data = rest
		sum := sha256.Sum256(l.Record)
		if l.V != 0 || hex.EncodeToString(sum[:]) != l.Hash {
			return recs, &VerifyError{Path: path, Record: n, Reason: "contents do not match its hash"}
		}
		r, err := link(l.Record, n, prev)
		if err != nil {
			return recs, &VerifyError{Path: path, Record: n, Reason: err.Error()}
		}
		recs = append(recs, r)
		prev = l.Hash
	}
	return recs, anchored(path, head, recs, prev)
}

func errText(err error) string {
	if err == nil {
		return "no record"
	}
	return err.Error()
}

// ReadAnchor reads the anchor of the log at path, not following a symlink
// at its name, nor waiting on a FIFO put there (it must be a regular
// file); for reports and tests.
func ReadAnchor(path string) (Head, error) {
	f, err := os.OpenFile(HeadPath(path), os.O_RDONLY|nofollow|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return Head{}, fmt.Errorf("read anchor: %w", err)
	}
	defer f.Close()
	if err := checkFile(f, false); err != nil {
		return Head{}, fmt.Errorf("read anchor: %w", err)
	}
	return readHead(f)
}
