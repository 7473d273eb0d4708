package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/policy"
)

// A stub is a mount target the launcher creates on the host because the
// policy names a path that does not exist yet (bwrap can only mount onto an
// existing path). Each launch records the stubs it holds in a file of its
// own in the registry; a stub is removed when no live launch holds it, so
// the last sandbox to exit removes it, also when several share a
// workspace, and the next launch removes those of a crashed one. All of it
// happens under one lock, briefly: one file written per launch, one
// removed, because every metadata operation costs on a launch's hot path.
type registry struct {
	dir  string
	lock *os.File
	me   string                // this launch's holder file name
	live map[string]stubRecord // stubs held by other live launches
	mine map[string]stubRecord // stubs this launch holds
}

type holderFile struct {
	Stubs []stubRecord `json:"stubs"`
}

type stubRecord struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Ino is the stub's inode when cordon made it: a path that now holds
	// another inode (the user replaced the stub) is not cordon's to remove.
	// A file system may give a removed stub's inode number to the next
	// directory made, so this narrows the mistake; it cannot rule it out.
	Ino uint64 `json:"ino"`
}

var holderSeq atomic.Int64

// openRegistry takes the registry's lock, removes the stubs of launches
// that died, and loads what live launches hold. Call unlock when done.
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
	r := &registry{dir: dir, lock: f, mine: map[string]stubRecord{}}
	r.me = fmt.Sprintf("%d-%s-%d.json", os.Getpid(), procStart(os.Getpid()), holderSeq.Add(1))
	r.load("")
	return r, nil
}

func (r *registry) unlock() {
	unix.Flock(int(r.lock.Fd()), unix.LOCK_UN)
	r.lock.Close()
}

// load reads every holder file but skip's; stubs of dead holders that no
// live one shares are removed.
func (r *registry) load(skip string) {
	r.live = map[string]stubRecord{}
	ents, _ := os.ReadDir(r.dir)
	dead := map[string]stubRecord{}
	for _, d := range ents {
		name := d.Name()
		if !strings.HasSuffix(name, ".json") || name == skip {
			continue
		}
		var h holderFile
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil || json.Unmarshal(b, &h) != nil {
			os.Remove(filepath.Join(r.dir, name))
			continue
		}
		alive := holderAlive(name)
		for _, s := range h.Stubs {
			if alive {
				r.live[s.Path] = s
			} else {
				dead[s.Path] = s
			}
		}
		if !alive {
			os.Remove(filepath.Join(r.dir, name))
		}
	}
	r.remove(dead)
}

// stat is the renderer's view of the host: a live stub counts as missing,
// so a second sandbox holds it too instead of mounting onto it unheld;
// anything else is what canonicalization saw (host is Canonical.Stat).
func (r *registry) stat(host bwrap.StatFunc) bwrap.StatFunc {
	return func(p string) (exists, dir bool) {
		if s, ok := r.live[p]; ok {
			return false, s.Dir
		}
		return host(p)
	}
}

// acquire creates the stubs (and any missing parents, as stubs of their
// own), adopts those other launches hold, and records them all.
func (r *registry) acquire(stubs []bwrap.Stub) error {
	for _, s := range stubs {
		chain := append(missingParents(s.Path, r.live), s.Path)
		for i, p := range chain {
			isDir := s.Dir || i < len(chain)-1
			if s, ok := r.live[p]; ok {
				r.mine[p] = s
				continue
			}
			if _, err := os.Lstat(p); err == nil {
				continue // made by someone else meanwhile: not ours
			}
			ino, err := createStub(p, isDir)
			if err != nil {
				r.release()
				return err
			}
			r.mine[p] = stubRecord{Path: p, Dir: isDir, Ino: ino}
		}
	}
	if len(r.mine) == 0 {
		return nil
	}
	var h holderFile
	for _, s := range r.mine {
		h.Stubs = append(h.Stubs, s)
	}
	b, _ := json.Marshal(h)
	tmp := filepath.Join(r.dir, r.me+".tmp")
	err := os.WriteFile(tmp, b, 0o600)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(r.dir, r.me))
	}
	if err != nil {
		r.release()
		return fmt.Errorf("stub registry: %w", err)
	}
	return nil
}

// release drops this launch's holder file and removes its stubs that no
// other live launch holds. The caller holds the lock.
func (r *registry) release() {
	if len(r.mine) == 0 {
		return
	}
	os.Remove(filepath.Join(r.dir, r.me))
	r.load(r.me)
	orphans := map[string]stubRecord{}
	for p, s := range r.mine {
		if _, held := r.live[p]; !held {
			orphans[p] = s
		}
	}
	r.remove(orphans)
	r.mine = map[string]stubRecord{}
}

// remove deletes stubs deepest first, so parents created as stubs go last.
func (r *registry) remove(stubs map[string]stubRecord) {
	paths := make([]string, 0, len(stubs))
	for p := range stubs {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int { return policy.Depth(b) - policy.Depth(a) })
	for _, p := range paths {
		removeStub(stubs[p])
	}
}

// missingParents lists the ancestors of p that do not exist, or that exist
// only as stubs of live launches, shallow to deep.
func missingParents(p string, live map[string]stubRecord) []string {
	var out []string
	for q := filepath.Dir(p); q != "/"; q = filepath.Dir(q) {
		if _, stub := live[q]; !stub {
			if _, err := os.Lstat(q); err == nil {
				break
			}
		}
		out = append(out, q)
	}
	slices.Reverse(out)
	return out
}

// createStub makes an empty directory (or file) at p and returns its inode.
func createStub(p string, dir bool) (uint64, error) {
	if dir {
		if err := os.Mkdir(p, 0o755); err != nil {
			return 0, fmt.Errorf("create mount stub: %w", err)
		}
	} else {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return 0, fmt.Errorf("create mount stub: %w", err)
		}
		f.Close()
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, fmt.Errorf("create mount stub: %w", err)
	}
	return inode(fi), nil
}

// removeStub removes a stub only while it is still what cordon made: the
// same inode, an empty directory or an empty regular file. Anything else
// belongs to someone.
func removeStub(s stubRecord) {
	fi, err := os.Lstat(s.Path)
	if err != nil || (s.Ino != 0 && inode(fi) != s.Ino) {
		return
	}
	switch {
	case s.Dir && fi.IsDir():
		syscall.Rmdir(s.Path) // fails, as it should, when not empty
	case !s.Dir && fi.Mode().IsRegular() && fi.Size() == 0:
		os.Remove(s.Path)
	}
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// holderAlive reads "PID-START-SEQ.json" and checks that process PID still
// runs and started when it did (a recycled pid is not the holder).
func holderAlive(name string) bool {
	parts := strings.SplitN(strings.TrimSuffix(name, ".json"), "-", 3)
	if len(parts) != 3 {
		return false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return false
	}
	if unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	return procStart(pid) == parts[1]
}
