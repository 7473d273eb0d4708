// Package audit keeps a tamper-evident trail of tool calls: JSON lines,
// each record chained to the one before by SHA-256, and a head anchor
// (record count, last hash, log size) in FILE.head beside the log.
//
// Editing a record breaks its own hash; inserting, removing or reordering
// breaks the chain at the next record; cutting the log short (or appending
// behind cordon's back) disagrees with the anchor. [Verify] names the first
// bad record. Someone who can rewrite both the log and the anchor can forge
// a consistent history: keep a copy of the anchor elsewhere when that
// matters.
//
// Each line is
//
//	{"hash":"<sha256 of record>","record":{"seq":1,"time":...,"kind":"request","tool_use_id":"t1","data":{...},"prev":"<hash of seq 0 or empty>"}}
//
// and the hash covers the record's bytes exactly as written.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Record kinds written by the governed runner.
const (
	KindRequest    = "request"
	KindPermission = "permission"
	KindResult     = "result"
)

// Record is one entry of the trail.
type Record struct {
	Seq       uint64          `json:"seq"`
	Time      time.Time       `json:"time"`
	Kind      string          `json:"kind"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Data      json.RawMessage `json:"data"`
	Prev      string          `json:"prev"`
}

// line is the on-disk form; Record stays raw so its hash is over the exact
// bytes written.
type line struct {
	Hash   string          `json:"hash"`
	Record json.RawMessage `json:"record"`
}

// Head is the anchor kept in FILE.head.
type Head struct {
	Count uint64 `json:"count"`
	Hash  string `json:"hash"`
	Size  int64  `json:"size"`
}

// HeadPath is where the anchor of a log lives.
func HeadPath(log string) string { return log + ".head" }

// Log appends records to one file. Appends are serialised across
// processes with a lock on the log (hooks run as separate processes).
type Log struct {
	path string
	now  func() time.Time
}

// Open returns a Log for path; nothing is created until the first Append.
func Open(path string) (*Log, error) {
	if path == "" {
		return nil, errors.New("open audit log: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log %q: %w", path, err)
	}
	return &Log{path: abs, now: func() time.Time { return time.Now().UTC() }}, nil
}

// Path is the log's absolute path.
func (l *Log) Path() string { return l.path }

// Append writes one record of kind for toolUseID with data marshalled as
// JSON. On any failure the log is cut back to where it was, so no record is
// half-written or left outside the anchor.
func (l *Log) Append(kind, toolUseID string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("append %s record to %s: %w", kind, l.path, err)
	}
	// The directory is private: the trail says what an agent did.
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("append %s record: %w", kind, err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("append %s record: %w", kind, err)
	}
	defer f.Close()
	if err := lock(f); err != nil {
		return fmt.Errorf("append %s record: lock %s: %w", kind, l.path, err)
	}
	defer unlock(f)
	if err := l.append(f, kind, toolUseID, raw); err != nil {
		return fmt.Errorf("append %s record to %s: %w", kind, l.path, err)
	}
	return nil
}

func (l *Log) append(f *os.File, kind, toolUseID string, raw json.RawMessage) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	head, err := ReadHead(HeadPath(l.path))
	switch {
	case errors.Is(err, fs.ErrNotExist) && size == 0:
		head = Head{}
	case err != nil:
		return err
	case head.Size != size:
		return fmt.Errorf("log is %d bytes but its anchor says %d; run 'cordon audit verify %s'", size, head.Size, l.path)
	}
	rec, err := json.Marshal(Record{Seq: head.Count + 1, Time: l.now(), Kind: kind, ToolUseID: toolUseID, Data: raw, Prev: head.Hash})
	if err != nil {
		return err
	}
	sum := sha256.Sum256(rec)
	hash := hex.EncodeToString(sum[:])
	out, err := json.Marshal(line{Hash: hash, Record: rec})
	if err != nil {
		return err
	}
	out = append(out, '\n')
	// One write of the whole line; on failure cut back so no partial line
	// stays behind.
	if n, err := f.Write(out); err != nil || n != len(out) {
		_ = f.Truncate(size)
		if err == nil {
			err = fmt.Errorf("short write (%d of %d bytes)", n, len(out))
		}
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(size)
		return err
	}
	next := Head{Count: head.Count + 1, Hash: hash, Size: size + int64(len(out))}
	if err := writeHead(HeadPath(l.path), next); err != nil {
		_ = f.Truncate(size)
		_ = f.Sync()
		return err
	}
	return nil
}

// ReadHead reads an anchor file.
func ReadHead(path string) (Head, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Head{}, fmt.Errorf("read anchor: %w", err)
	}
	var h Head
	if err := json.Unmarshal(b, &h); err != nil {
		return Head{}, fmt.Errorf("read anchor %s: %w", path, err)
	}
	return h, nil
}

// writeHead replaces the anchor atomically: temp file, fsync, rename,
// fsync of the directory.
func writeHead(path string, h Head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write anchor: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write anchor %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write anchor %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write anchor %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write anchor: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
