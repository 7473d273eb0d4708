package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/policy"
)

// A stub is a mount target the launcher creates on the host because the
// policy names a path that does not exist yet (bwrap can only mount onto an
// existing path). The registry remembers every stub and which launches hold
// it, so the last sandbox to exit removes it, also when several share a
// workspace, and the next launch removes those of a crashed one.
type registry struct {
	dir  string
	lock *os.File
	me   string
}

type stubEntry struct {
	Path    string   `json:"path"`
	Dir     bool     `json:"dir"`
	Holders []string `json:"holders"`
}

var holderSeq atomic.Int64

// openRegistry takes the registry's lock; call unlock when done.
func openRegistry() (*registry, error) {
	rt, err := runtimeDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(rt, "stubs")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("stub registry: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stub registry: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("stub registry: lock: %w", err)
	}
	me := fmt.Sprintf("%d:%s:%d", os.Getpid(), procStart(os.Getpid()), holderSeq.Add(1))
	return &registry{dir: dir, lock: f, me: me}, nil
}

func (r *registry) unlock() {
	unix.Flock(int(r.lock.Fd()), unix.LOCK_UN)
	r.lock.Close()
}

func (r *registry) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(r.dir, hex.EncodeToString(sum[:16])+".json")
}

func (r *registry) load(path string) (*stubEntry, bool) {
	b, err := os.ReadFile(r.file(path))
	if err != nil {
		return nil, false
	}
	var e stubEntry
	if json.Unmarshal(b, &e) != nil || e.Path != path {
		return nil, false
	}
	return &e, true
}

func (r *registry) store(e *stubEntry) error {
	b, _ := json.Marshal(e)
	tmp := r.file(e.Path) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("stub registry: %w", err)
	}
	return os.Rename(tmp, r.file(e.Path))
}

// stat is the renderer's view of the host: a live stub counts as missing,
// so a second sandbox holds it too instead of mounting onto it unheld.
func (r *registry) stat(p string) (exists, dir bool) {
	if e, ok := r.load(p); ok {
		return false, e.Dir
	}
	fi, err := os.Stat(p)
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}

// sweep removes stubs whose holders have all exited.
func (r *registry) sweep() {
	ents, _ := os.ReadDir(r.dir)
	var dead []*stubEntry
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.dir, d.Name()))
		var e stubEntry
		if err != nil || json.Unmarshal(b, &e) != nil {
			os.Remove(filepath.Join(r.dir, d.Name()))
			continue
		}
		live := e.Holders[:0]
		for _, h := range e.Holders {
			if holderAlive(h) {
				live = append(live, h)
			}
		}
		e.Holders = live
		if len(live) == 0 {
			dead = append(dead, &e)
		}
	}
	r.remove(dead)
}

// acquire creates the stubs (and any missing parents, as stubs of their
// own) and records this launch as a holder of each.
func (r *registry) acquire(stubs []bwrap.Stub) ([]string, error) {
	var held []string
	for _, s := range stubs {
		chain := append(missingParents(s.Path), s.Path)
		for i, p := range chain {
			isDir := s.Dir || i < len(chain)-1
			if e, ok := r.load(p); ok {
				if !slices.Contains(e.Holders, r.me) {
					e.Holders = append(e.Holders, r.me)
					if err := r.store(e); err != nil {
						return held, err
					}
					held = append(held, p)
				}
				continue
			}
			if _, err := os.Lstat(p); err == nil {
				continue // made by someone else meanwhile: not ours
			}
			if err := createStub(p, isDir); err != nil {
				return held, err
			}
			if err := r.store(&stubEntry{Path: p, Dir: isDir, Holders: []string{r.me}}); err != nil {
				removeStub(p, isDir)
				return held, err
			}
			held = append(held, p)
		}
	}
	return held, nil
}

// release drops this launch's hold on paths and removes stubs nobody holds.
func (r *registry) release(paths []string) {
	var dead []*stubEntry
	for _, p := range paths {
		e, ok := r.load(p)
		if !ok {
			continue
		}
		e.Holders = slices.DeleteFunc(e.Holders, func(h string) bool { return h == r.me })
		if len(e.Holders) == 0 {
			dead = append(dead, e)
		} else {
			r.store(e)
		}
	}
	r.remove(dead)
}

// remove deletes stubs deepest first, so parents created as stubs go last.
func (r *registry) remove(es []*stubEntry) {
	slices.SortFunc(es, func(a, b *stubEntry) int { return policy.Depth(b.Path) - policy.Depth(a.Path) })
	for _, e := range es {
		removeStub(e.Path, e.Dir)
		os.Remove(r.file(e.Path))
	}
}

func missingParents(p string) []string {
	var out []string
	for q := filepath.Dir(p); q != "/"; q = filepath.Dir(q) {
		if _, err := os.Lstat(q); err == nil {
			break
		}
		out = append(out, q)
	}
	slices.Reverse(out)
	return out
}

func createStub(p string, dir bool) error {
	if dir {
		if err := os.Mkdir(p, 0o755); err != nil {
			return fmt.Errorf("create mount stub: %w", err)
		}
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("create mount stub: %w", err)
	}
	return f.Close()
}

// removeStub removes p only while it is still what cordon made: an empty
// directory or an empty regular file. Anything else belongs to someone.
func removeStub(p string, dir bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return
	}
	switch {
	case dir && fi.IsDir():
		syscall.Rmdir(p) // fails, as it should, when not empty
	case !dir && fi.Mode().IsRegular() && fi.Size() == 0:
		os.Remove(p)
	}
}

func holderAlive(h string) bool {
	var pid int
	var start string
	parts := strings.SplitN(h, ":", 3)
	if len(parts) != 3 {
		return false
	}
	if _, err := fmt.Sscan(parts[0], &pid); err != nil || pid <= 0 {
		return false
	}
	start = parts[1]
	if unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	return procStart(pid) == start
}
