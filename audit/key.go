package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// Key is the secret that keys a log's chain: every record and the anchor
// carry an HMAC-SHA256 under it. Without the key nobody can write a record
// or an anchor that verifies, so a sandbox that could write a log still
// cannot rewrite its history unnoticed (docs/threat-model.md, class 11).
type Key struct {
	secret [32]byte
	// Path is the file the key was read from ("" for a key made in memory).
	Path string
}

// KeyFile is the name of the user's key in cordon's state directory.
const KeyFile = "key"

// NewKey returns a fresh random key, kept in memory only.
func NewKey() (*Key, error) {
	k := &Key{}
	if _, err := rand.Read(k.secret[:]); err != nil {
		return nil, fmt.Errorf("make audit key: %w", err)
	}
	return k, nil
}

// ID names the key without revealing it: logs record it, so that a log
// verified with another key says so rather than looking edited.
func (k *Key) ID() string { return k.mac("cordon audit key id", nil)[:16] }

// mac is HMAC-SHA256 of data under the key, domain-separated so that a
// record's MAC can never stand for an anchor's.
func (k *Key) mac(domain string, data []byte) string {
	secret := k.secret[:]
	if testhook.AuditUnkeyed {
		secret = make([]byte, len(k.secret))
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// Export is the key in its file form: 64 hex digits and a newline. Whoever
// has it can verify logs written with it, and forge them: keep it as
// private as the logs' integrity matters.
func (k *Key) Export() []byte { return []byte(hex.EncodeToString(k.secret[:]) + "\n") }

// ParseKey reads a key in its file form.
func ParseKey(b []byte) (*Key, error) {
	b = bytes.TrimSpace(b)
	k := &Key{}
	if hex.DecodedLen(len(b)) != len(k.secret) {
		return nil, fmt.Errorf("parse audit key: want %d hex digits, got %d bytes", 2*len(k.secret), len(b))
	}
	if _, err := hex.Decode(k.secret[:], b); err != nil {
		return nil, fmt.Errorf("parse audit key: %w", err)
	}
	return k, nil
}

// ReadKey reads a key file (for example one made by 'cordon audit key
// export') without following a symlink at its name.
func ReadKey(path string) (*Key, error) { return readKey(path, false) }

// readKey reads path; mine also requires what cordon's own key must be: a
// file of the user's, readable by nobody else.
func readKey(path string, mine bool) (*Key, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("read audit key %s: %w", path, linkErr(err))
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	// Only the kind and the owner are checked: a key is read, never
	// written through this name, and it is linked into place (below).
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read audit key: %w", err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read audit key: %s is not a regular file (%v)", path, fi.Mode().Type())
	case mine && int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("read audit key: %s belongs to uid %d, not to you (uid %d)", path, st.Uid, os.Geteuid())
	case mine && fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("read audit key: %s has mode %v, readable by others: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return nil, fmt.Errorf("read audit key %s: %w", path, err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k.Path = path
	return k, nil
}

// WriteKey writes k to a new file path, mode 0600; an existing file or a
// symlink at path is refused, never overwritten or followed.
func WriteKey(path string, k *Key) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write audit key: %w", err)
	}
	if _, err := f.Write(k.Export()); err != nil {
		f.Close()
		return fmt.Errorf("write audit key %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write audit key %s: %w", path, err)
	}
	return f.Close()
}

// UserKeyPath is where the current user's key lives: cordon's state
// directory, which every sandbox cordon launches is denied.
func UserKeyPath() string { return filepath.Join(state.Path(), state.Audit, KeyFile) }

// UserKey returns the current user's key, made on first use: 32 random
// bytes in <state>/audit/key, mode 0600.
func UserKey() (*Key, error) {
	dir, err := state.Sub(state.Audit)
	if err != nil {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	path := filepath.Join(dir, KeyFile)
	k, err := readKey(path, true)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	// Made under a temporary name and linked into place, which fails if
	// another process got there first: two first hook calls at once agree
	// on one key, and nobody ever reads a half-written one.
	nk, err := NewKey()
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.%s", KeyFile, os.Getpid(), nk.ID()[:8]))
	if err := WriteKey(tmp, nk); err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("audit key: %w", err)
	}
	return readKey(path, true)
}

// ExistingUserKey returns the current user's key, or an error wrapping
// fs.ErrNotExist when none was made yet; it never makes one.
func ExistingUserKey() (*Key, error) {
	path := UserKeyPath()
	k, err := readKey(path, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no audit key on this machine (%s): %w", path, err)
	}
	return k, err
}
