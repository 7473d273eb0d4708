// Package audit keeps a tamper-evident trail of tool calls: JSON lines,
// each record chained to the one before by an HMAC-SHA256 under the user's
// key, and an anchor (record count, last MAC, log size, itself MACed) in
// FILE.head beside the log.
//
// Editing a record breaks its own MAC; inserting, removing or reordering
// breaks the chain at the next record; cutting the log short (or appending
// behind cordon's back) disagrees with the anchor. [Verify] names the first
// bad record. Because the MACs need the key, which lives in cordon's state
// directory and is denied inside every sandbox, someone who can write the
// log but not read the key cannot re-chain a rewritten history so that it
// verifies. They can still delete the log, or put back an older log and
// anchor they saved: a log in the state directory ([DefaultPath]) is out
// of every sandbox's reach.
//
// Each line is
//
//	{"v":2,"key":"<key id>","mac":"<hmac of record>","record":{"seq":1,"time":...,"kind":"request","tool_use_id":"t1","data":{...},"prev":"<mac of seq 0 or empty>"}}
//
// and the MAC covers the record's bytes exactly as written. Logs of format
// 1 (a plain SHA-256 chain, no "v") are recognised and reported as unkeyed,
// never as verified.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
	"github.com/cordon-sandbox/cordon/internal/safefs"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// Format is the version of the log format this package writes.
const Format = 2

// Record kinds written by the governed runner, the hook and 'cordon run'.
const (
	KindRequest    = "request"
	KindPermission = "permission"
	KindResult     = "result"
	KindLaunch     = "launch"
	// KindNetwork records one decision of a sandbox's network proxy.
	KindNetwork = "network"
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

// line is the on-disk form; Record stays raw so its MAC is over the exact
// bytes written. Hash is format 1's unkeyed SHA-256.
type line struct {
	V      int             `json:"v,omitempty"`
	Key    string          `json:"key,omitempty"`
	MAC    string          `json:"mac,omitempty"`
	Hash   string          `json:"hash,omitempty"`
	Record json.RawMessage `json:"record"`
}

// Head is the anchor kept in FILE.head.
type Head struct {
	V     int    `json:"v,omitempty"`
	Key   string `json:"key,omitempty"`
	Count uint64 `json:"count"`
	Hash  string `json:"hash"` // the last record's MAC
	Size  int64  `json:"size"`
	MAC   string `json:"mac,omitempty"`
}

func (h Head) sum(k *Key) string {
	return k.mac("cordon audit head", fmt.Appendf(nil, "%d %s %d %s", h.Count, h.Hash, h.Size, h.Key))
}

// headSize is the anchor's fixed size on disk. The anchor is rewritten in
// place, one write at offset 0, not replaced by a rename: a sandbox that
// has the anchor bound read-only would lose that mount when the name is
// replaced on the host, and could then write the new one.
const headSize = 512

// HeadPath is where the anchor of a log lives.
func HeadPath(log string) string { return log + ".head" }

// DefaultPath is the log called name in cordon's state directory
// (<state>/audit/name), made if need be, by its real path.
func DefaultPath(name string) (string, error) {
	dir, err := state.Sub(state.Audit)
	if err != nil {
		return "", fmt.Errorf("audit log: %w", err)
	}
	// The state directory's ancestors are the system's (a /home that is a
	// link, macOS's /var); the log is named by where they lead.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, name), nil
}

// Log appends records to one file. Appends are serialised across
// processes with a lock on the log (hooks run as separate processes).
type Log struct {
	path string
	key  *Key
	now  func() time.Time
}

// Open returns a Log for path keyed with key; nothing is opened or created
// until the first Append.
func Open(path string, key *Key) (*Log, error) {
	if path == "" {
		return nil, errors.New("open audit log: empty path")
	}
	if key == nil {
		return nil, fmt.Errorf("open audit log %s: no key", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log %q: %w", path, err)
	}
	return &Log{path: abs, key: key, now: func() time.Time { return time.Now().UTC() }}, nil
}

// Check reports, creating nothing, what would make Append fail at once: a
// directory of the log that is missing or reached through a symlink, a
// log or anchor that is a symlink, not a regular file of the user's, or
// has another hard link. A command calls it before it starts work, so that
// a bad log is one error up front rather than one per record.
func (l *Log) Check() error {
	dir, err := openLogDir(filepath.Dir(l.path))
	if err != nil {
		return fmt.Errorf("audit log %s: %w", l.path, err)
	}
	defer dir.Close()
	for _, name := range []string{l.path, HeadPath(l.path)} {
		f, err := openAt(dir, filepath.Base(name), rdonly, false)
		if errors.Is(err, fs.ErrNotExist) {
			continue // made by the first Append
		}
		if err == nil {
			err = checkFile(f, true)
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("audit log %s: %w", name, err)
		}
	}
	return nil
}

// OpenUser returns a Log for path keyed with the user's key (made on first
// use); path "" is DefaultPath(name).
func OpenUser(path, name string) (*Log, error) {
	if path == "" {
		var err error
		if path, err = DefaultPath(name); err != nil {
			return nil, err
		}
	}
	k, err := UserKey()
	if err != nil {
		return nil, err
	}
	return Open(path, k)
}

// Path is the log's absolute path.
func (l *Log) Path() string { return l.path }

// Protect lists what a sandbox launched alongside this log must not be able
// to change: the log and its anchor, to be made read-only. It is empty for
// a log in cordon's state directory, which every sandbox is denied already
// (a read-only root there would make it readable).
func (l *Log) Protect() []string {
	st := state.Path()
	if real, err := filepath.EvalSymlinks(st); err == nil {
		st = real
	}
	if l.path == st || strings.HasPrefix(l.path, st+string(filepath.Separator)) {
		return nil
	}
	return []string{l.path, HeadPath(l.path)}
}

// Append writes one record of kind for toolUseID with data marshalled as
// JSON. On any failure the log is cut back to where it was, so no record is
// half-written or left outside the anchor. A log or anchor that is a
// symlink, is reached through one, is not a regular file of the user's, or
// has another hard link is refused, and nothing is written anywhere.
func (l *Log) Append(kind, toolUseID string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("append %s record to %s: %w", kind, l.path, err)
	}
	dir, err := openLogDir(filepath.Dir(l.path))
	if err != nil {
		return fmt.Errorf("append %s record to audit log %s: %w", kind, l.path, err)
	}
	defer dir.Close()
	f, err := l.openLog(dir)
	if err != nil {
		return fmt.Errorf("append %s record to audit log %s: %w", kind, l.path, err)
	}
	defer f.Close()
	lk, err := lock(l.path, true)
	if err != nil {
		return fmt.Errorf("append %s record: lock %s: %w", kind, l.path, err)
	}
	defer unlock(lk)
	if err := l.append(dir, f, kind, toolUseID, raw); err != nil {
		return fmt.Errorf("append %s record to audit log %s: %w", kind, l.path, err)
	}
	return nil
}

func (l *Log) openLog(dir *safefs.Root) (*os.File, error) {
	if testhook.AuditFollowLinks {
		return os.OpenFile(l.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	}
	f, err := openAt(dir, filepath.Base(l.path), appendMode, true)
	if err != nil {
		return nil, err
	}
	if err := checkFile(f, true); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// append adds one record to the open, locked log f in dir: it checks the
// anchor against the log, writes the record's line and then the new
// anchor, cutting the log back should either fail.
func (l *Log) append(dir *safefs.Root, f *os.File, kind, toolUseID string, raw json.RawMessage) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	hf, err := openAt(dir, filepath.Base(HeadPath(l.path)), rdwr, size == 0)
	if err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	defer hf.Close()
	if err := checkFile(hf, true); err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	head, err := l.anchorOf(hf, size)
	if err != nil {
		return err
	}
	keep := l.keepsAnchor()
	if keep {
		if err := l.matchesKept(f, head); err != nil {
			return err
		}
	}
	out, mac, err := l.recordLine(head, kind, toolUseID, raw)
	if err != nil {
		return err
	}
	if err := writeLine(f, out, size); err != nil {
		return err
	}
	next := Head{V: Format, Key: l.key.ID(), Count: head.Count + 1, Hash: mac, Size: size + int64(len(out))}
	next.MAC = next.sum(l.key)
	write := writeHead
	if testhook.AuditRenameAnchor {
		write = func(_ *os.File, h Head) error { return renameHead(HeadPath(l.path), h) }
	}
	if err := write(hf, next); err != nil {
		_ = f.Truncate(size)
		_ = f.Sync()
		return err
	}
	if keep {
		// Should this fail, the log is one record past cordon's anchor,
		// which the next append accepts (see continues).
		return writeKept(l.path, next)
	}
	return nil
}

// anchorOf reads the anchor hf of a log of size bytes and checks that it
// is this key's and describes the log as it is: an empty anchor only
// starts a new log.
func (l *Log) anchorOf(hf *os.File, size int64) (Head, error) {
	head, err := readHead(hf)
	switch {
	case err == errEmptyHead && size == 0:
		return Head{}, nil // a new log
	case err != nil:
		return Head{}, err
	case head.V != Format:
		return Head{}, fmt.Errorf("the log is of the unkeyed format 1; move it aside and let cordon start a new one")
	case head.Key != l.key.ID():
		return Head{}, fmt.Errorf("the log was written with audit key %s, not this user's key %s", head.Key, l.key.ID())
	case head.MAC != head.sum(l.key):
		return Head{}, fmt.Errorf("its anchor %s was not written with this key: run 'cordon audit verify %s'", hf.Name(), l.path)
	case head.Size != size:
		return Head{}, fmt.Errorf("log is %d bytes but its anchor says %d; run 'cordon audit verify %s'", size, head.Size, l.path)
	}
	return head, nil
}

// matchesKept checks the log's anchor against cordon's own copy of it,
// when there is one under this key: a log put back to an older state
// (anchor and all) disagrees with it.
func (l *Log) matchesKept(f *os.File, head Head) error {
	k, err := readKept(l.path)
	if err != nil {
		return err
	}
	if k != nil && k.Head.Key == l.key.ID() {
		return l.continues(f, head, k.Head)
	}
	return nil
}

// recordLine is the line of the record that follows head, and its MAC.
func (l *Log) recordLine(head Head, kind, toolUseID string, raw json.RawMessage) (out []byte, mac string, err error) {
	rec, err := json.Marshal(Record{Seq: head.Count + 1, Time: l.now(), Kind: kind, ToolUseID: toolUseID, Data: raw, Prev: head.Hash})
	if err != nil {
		return nil, "", err
	}
	mac = l.key.mac("cordon audit record", rec)
	out, err = json.Marshal(line{V: Format, Key: l.key.ID(), MAC: mac, Record: rec})
	if err != nil {
		return nil, "", err
	}
	return append(out, '\n'), mac, nil
}

// writeLine appends out to the log f of size bytes in one write, then
// syncs; on failure it cuts the log back so no partial line stays behind.
func writeLine(f *os.File, out []byte, size int64) error {
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
	return nil
}

var errEmptyHead = errors.New("the anchor is empty")

// readHead reads an anchor from f.
func readHead(f *os.File) (Head, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if err != nil {
		return Head{}, fmt.Errorf("read anchor %s: %w", f.Name(), err)
	}
	if len(b) == 0 {
		return Head{}, errEmptyHead
	}
	var h Head
	if err := json.Unmarshal(b, &h); err != nil {
		return Head{}, fmt.Errorf("read anchor %s: %w", f.Name(), err)
	}
	return h, nil
}

// writeHead writes h over the anchor in place (see headSize): padded to a
// fixed size so that one write replaces it whole, then synced.
func writeHead(f *os.File, h Head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if len(b) >= headSize {
		return fmt.Errorf("write anchor %s: %d bytes, more than %d", f.Name(), len(b), headSize-1)
	}
	buf := []byte(fmt.Sprintf("%-*s\n", headSize-1, b))
	if _, err := f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("write anchor: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > headSize {
		if err := f.Truncate(headSize); err != nil {
			return fmt.Errorf("write anchor: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write anchor: %w", err)
	}
	return nil
}

// renameHead is how anchors were written before they were rewritten in
// place; only the mutation check uses it, to show why they no longer are.
func renameHead(path string, h Head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}
