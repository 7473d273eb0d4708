package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/safefs"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// A stub is a mount target the launcher creates on the host because the
// policy names a path that does not exist yet (bwrap can only mount onto an
// existing path). Each launch records the stubs it holds in a holder file
// of its own in the registry (registry_linux.go), under one lock, briefly.
//
// A stub is removed only when no live launch holds it: removing a
// directory that a live sandbox mounts over would detach that mount inside
// the sandbox (Linux allows rmdir of a mount point of another mount
// namespace), and with it the protection. The stub reaper (reaper_linux.go)
// removes stubs once their last holder has been gone for the linger time
// the holder asked for (CORDON_STUB_LINGER, default 1s), so back-to-back
// launches in one workspace reuse the stubs instead of paying a mkdir and
// an rmdir each. A launch that cannot have a reaper removes its stubs
// itself when it ends.

// stubRecord is one stub as a holder file records it.
type stubRecord struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Ino is the stub's inode when cordon made it: a path that now holds
	// another inode (the user replaced the stub) is not cordon's to remove,
	// and a record without one is never acted on. A file system may give
	// a removed stub's inode number to the next directory made, so this
	// narrows the mistake; it cannot rule it out.
	Ino uint64 `json:"ino"`
	// Root is the directory the stub was made beneath (the deepest
	// writable root of the launch above it, else "/"): the stub is made,
	// checked and removed relative to it opened, one component at a time,
	// never through a link (internal/safefs). "" means "/".
	Root string `json:"root,omitempty"`
	// Size is a file stub's size as made (its content, an empty document
	// of the file's format: bwrap.Options.AbsentFile); a file of another
	// size was written since, by someone else, and is theirs.
	Size int64 `json:"size,omitempty"`
}

// stubLinger is Cmd.StubLinger's meaning: d when set, else
// CORDON_STUB_LINGER (a Go duration, e.g. "0", "500ms"), else the default.
func stubLinger(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	if d > 0 {
		return min(d, time.Hour)
	}
	v := os.Getenv("CORDON_STUB_LINGER")
	if v == "" {
		return DefaultStubLinger
	}
	if v == "0" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return DefaultStubLinger
	}
	return min(d, time.Hour)
}

// stat is the renderer's view of the host: a stub in the registry counts
// as missing, so this launch holds it too (adopting it, or making it
// again) instead of mounting onto it unheld; anything else is what
// canonicalization saw (host is Canonical.Stat).
func (r *registry) stat(host bwrap.StatFunc) bwrap.StatFunc {
	return func(p string) (exists, dir bool) {
		if s, ok := r.live[p]; ok {
			return false, s.Dir
		}
		if s, ok := r.dead[p]; ok {
			return false, s.Dir
		}
		return host(p)
	}
}

// acquire creates the stubs (and any missing parents, as stubs of their
// own), adopts those the registry already has, and records them all.
// writable lists the launch's writable roots: each stub is made beneath
// the deepest one above it.
func (r *registry) acquire(stubs []bwrap.Stub, linger time.Duration, writable []string) error {
	seen := map[string]bool{} // parents known to exist
	// The directories this launch made its stubs in, held open: a launch
	// that fails removes what it made through them, also when a parent
	// has been swapped for a link since (then no path leads there).
	made := map[string]madeStub{}
	r.roots = map[string]*safefs.Root{}
	defer func() {
		for _, m := range made {
			m.parent.Close()
		}
		for _, root := range r.roots {
			root.Close()
		}
		r.roots = nil
	}()
	fail := func(err error) error {
		r.undo(made)
		r.removeMine()
		return err
	}
	for _, s := range stubs {
		if r.adopt(s) {
			continue
		}
		chain := append(r.missingParents(s.Path, seen, writable), s.Path)
		for i, p := range chain {
			isDir := s.Dir || i < len(chain)-1
			var content []byte
			if !isDir {
				content = s.Content
			}
			if rec, ok := r.held(p); ok {
				// Only a stub of the kind wanted: a directory where this
				// launch binds a file fails its mount (ENOTDIR), as it must.
				if r.intact(rec) && rec.Dir == isDir {
					r.mine[p] = rec
					continue
				}
				// Gone since (then made again below), or replaced by
				// someone: then it is theirs, and bwrap mounts onto it.
			}
			root := stubRoot(p, writable)
			ino, parent, err := createStub(root, p, isDir, content)
			if errors.Is(err, fs.ErrExist) {
				continue // made by someone else meanwhile: not ours
			}
			if err != nil {
				return fail(err)
			}
			r.mine[p] = stubRecord{Path: p, Dir: isDir, Ino: ino, Root: root, Size: int64(len(content))}
			if parent != nil {
				made[p] = madeStub{parent: parent, base: filepath.Base(p)}
			}
			if r.stubMade != nil {
				r.stubMade()
			}
		}
	}
	if len(r.mine) == 0 && len(r.masks) == 0 {
		return nil
	}
	h := holderFile{LingerMS: stubLinger(linger).Milliseconds(), Masks: r.masks, PidNS: selfPidNS()}
	for _, s := range r.mine {
		h.Stubs = append(h.Stubs, s)
	}
	if err := writeHolder(filepath.Join(r.dir, r.me), h); err != nil {
		return fail(fmt.Errorf("stub registry: %w", err))
	}
	if len(r.mine) > 0 {
		r.reaped = ensureReaper(r.dir) == nil
	}
	return nil
}

// madeStub is a stub this launch made: its parent directory, open, and
// its name there.
type madeStub struct {
	parent *safefs.Root
	base   string
}

// undo removes, deepest first, the stubs this launch made, from the
// directories it made them in, while each is still what it made.
func (r *registry) undo(made map[string]madeStub) {
	paths := make([]string, 0, len(made))
	for p := range made {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int { return policy.Depth(b) - policy.Depth(a) })
	for _, p := range paths {
		rec := r.mine[p]
		if _, held := r.live[p]; held {
			continue
		}
		m := made[p]
		m.parent.RemoveIf(m.base, func(in safefs.Info) bool { return isStub(rec, in) })
		delete(r.mine, p)
	}
	if len(paths) > 0 {
		r.stubsRemoved()
	}
}

// adopt takes over a stub the registry has, intact, with the parents that
// are stubs too (the common case: the last launch in this workspace made
// them), without looking at anything else.
func (r *registry) adopt(s bwrap.Stub) bool {
	p := s.Path
	rec, ok := r.held(p)
	if !ok || !r.intact(rec) || rec.Dir != s.Dir {
		return false
	}
	r.mine[p] = rec
	for q := filepath.Dir(p); q != "/"; q = filepath.Dir(q) {
		rec, ok := r.held(q)
		if !ok || !r.intact(rec) {
			break
		}
		r.mine[q] = rec
	}
	return true
}

// release ends this launch's hold. File stubs are removed now
// (removeNow); with a reaper the holder file of the rest is only marked
// done and the reaper removes those stubs after their linger time;
// without one, the stubs no other live launch holds are removed now. The
// caller holds the lock.
func (r *registry) release() {
	if len(r.mine) == 0 {
		if len(r.masks) > 0 {
			// Only masks: nothing to remove but the record that the
			// sandbox mounted them.
			os.Remove(filepath.Join(r.dir, r.me))
			r.masks = nil
		}
		return
	}
	me := filepath.Join(r.dir, r.me)
	r.removeNow()
	if len(r.mine) == 0 {
		os.Remove(me)
		r.masks = nil
		return
	}
	if r.reaped && ensureReaper(r.dir) == nil && os.Rename(me, filepath.Join(r.dir, donePrefix+r.me)) == nil {
		r.mine = map[string]stubRecord{}
		return
	}
	os.Remove(me)
	r.load(r.me)
	r.removeMine()
}

// removeNow removes, at the launch's end, this launch's file stubs that
// no live launch holds, rather than leave them to the reaper. They stand
// only in agents' homes, where the agent's next start outside cordon
// reads them, so they go at once; and a running reaper may be an older
// cordon's, which knows no stub size (stubRecord.Size) and would take a
// file that holds content for the user's and leave it. What is still
// mounted elsewhere after a short wait stays for the reaper.
func (r *registry) removeNow() {
	r.load(r.me)
	now := map[string]stubRecord{}
	for p, s := range r.mine {
		if _, held := r.live[p]; !held && !s.Dir {
			now[p] = s
		}
	}
	if len(now) == 0 {
		return
	}
	// The sandbox's mount namespace can outlive the process this launch
	// waited for by a moment (bwrap's own init ends after the command):
	// look again, a bounded number of times, before leaving the rest to
	// the reaper.
	for try := 0; ; try++ {
		busy := removeStubs(now)
		for p := range now {
			if !busy[p] {
				delete(r.mine, p)
				delete(now, p)
			}
		}
		if len(now) == 0 || try == fileStubTries {
			break
		}
		time.Sleep(fileStubRetry)
	}
	r.stubsRemoved()
}

// fileStubTries and fileStubRetry bound removeNow's wait for a sandbox's
// mount namespace to go: 80 × 25ms.
const (
	fileStubTries = 80
	fileStubRetry = 25 * time.Millisecond
)

// removeMine removes this launch's stubs that no live launch holds.
func (r *registry) removeMine() {
	orphans := map[string]stubRecord{}
	for p, s := range r.mine {
		if _, held := r.live[p]; !held {
			orphans[p] = s
		}
	}
	removeStubs(orphans)
	if len(orphans) > 0 {
		r.stubsRemoved()
	}
	r.mine = map[string]stubRecord{}
}

// removeStubs deletes stubs deepest first, so parents created as stubs go
// last, except those some sandbox still mounts over (mountedElsewhere),
// which it returns, with their parents.
func removeStubs(stubs map[string]stubRecord) (busy map[string]bool) {
	paths := make([]string, 0, len(stubs))
	for p := range stubs {
		paths = append(paths, p)
	}
	busy = mountedElsewhere(paths)
	for p := range busy {
		for q := filepath.Dir(p); q != "/"; q = filepath.Dir(q) {
			if _, ok := stubs[q]; ok {
				busy[q] = true
			}
		}
	}
	slices.SortFunc(paths, func(a, b string) int { return policy.Depth(b) - policy.Depth(a) })
	for _, p := range paths {
		if !busy[p] {
			removeStub(stubs[p])
		}
	}
	return busy
}

// missingParents lists the ancestors of p that do not exist, or that exist
// only as stubs in the registry, shallow to deep. seen remembers the
// directories found to exist. Each is looked at as createStub will make it,
// beneath the deepest writable root above it without following a link:
// by path, a parent swapped for a link would show what the link points at
// (ws/d/x through a link ws/d -> ~/y is ~/y/x), which createStub would then
// not find.
func (r *registry) missingParents(p string, seen map[string]bool, writable []string) []string {
	var out []string
	for q := filepath.Dir(p); q != "/"; q = filepath.Dir(q) {
		if _, stub := r.held(q); !stub {
			if seen[q] {
				break
			}
			if existsBeneath(q, writable) {
				seen[q] = true
				break
			}
		}
		out = append(out, q)
	}
	slices.Reverse(out)
	return out
}

// existsBeneath reports whether q exists (a link counts, not followed),
// looked at beneath the deepest writable root above it. A link on the way
// counts as missing: createStub meets it and fails the launch.
func existsBeneath(q string, writable []string) bool {
	if testhook.StubsByPath {
		_, err := os.Lstat(q)
		return err == nil
	}
	root := stubRoot(q, writable)
	if q == root {
		return true
	}
	rt, rel, err := beneath(root, q)
	if err != nil {
		return false
	}
	defer rt.Close()
	_, err = rt.Lstat(rel)
	return err == nil
}

// stubRoot is the deepest of the writable roots that lies above p, else
// "/". A stub below a writable root is where a sandbox can have swapped a
// parent for a link; making it relative to that root opened keeps it
// there.
func stubRoot(p string, writable []string) string {
	best := "/"
	for _, w := range writable {
		if w != "/" && strings.HasPrefix(p, w+"/") && len(w) > len(best) {
			best = w
		}
	}
	return best
}

// beneath opens s's root and returns s's path relative to it.
func beneath(root, p string) (*safefs.Root, string, error) {
	root, rel, err := relBeneath(root, p)
	if err != nil {
		return nil, "", err
	}
	r, err := safefs.OpenRoot(root)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}

// relBeneath is root ("" meaning "/") and p relative to it.
func relBeneath(root, p string) (string, string, error) {
	if root == "" {
		root = "/"
	}
	rel := strings.TrimPrefix(p, strings.TrimSuffix(root, "/")+"/")
	if rel == p || rel == "" {
		return "", "", fmt.Errorf("mount stub %s: not beneath %s", p, root)
	}
	return root, rel, nil
}

// createStub makes an empty directory, or a file holding content, at p,
// in its parent opened beneath root without following a link, and returns its inode
// and the parent, open (nil under the StubsByPath mutation). A link
// anywhere on the way fails the launch: the policy's paths were resolved,
// so one found now was swapped in since, and the stub would land wherever
// it points. fs.ErrExist means something is there already.
func createStub(root, p string, dir bool, content []byte) (uint64, *safefs.Root, error) {
	if testhook.StubsByPath {
		ino, err := createStubByPath(p, dir, content)
		return ino, nil, err
	}
	r, rel, err := beneath(root, p)
	if err != nil {
		return 0, nil, fmt.Errorf("create mount stub: %w", err)
	}
	defer r.Close()
	parent, err := r.OpenRoot(path.Dir(rel))
	if err != nil {
		return 0, nil, fmt.Errorf("create mount stub: %w", err)
	}
	base := path.Base(rel)
	if dir {
		err = parent.Mkdir(base, 0o755)
	} else {
		// 0600, as the agents make their own files there.
		var f *os.File
		if f, err = parent.CreateExcl(base, 0o600); err == nil {
			if err = writeStub(f, content); err != nil {
				parent.RemoveIf(base, func(in safefs.Info) bool { return in.Mode.IsRegular() && in.Size <= int64(len(content)) })
			}
		}
	}
	var in safefs.Info
	if err == nil {
		in, err = parent.Lstat(base)
	}
	if err != nil {
		parent.Close()
		return 0, nil, fmt.Errorf("create mount stub: %w", err)
	}
	return in.Ino, parent, nil
}

// createStubByPath is the mutation check's weakened createStub.
func createStubByPath(p string, dir bool, content []byte) (uint64, error) {
	if _, err := os.Lstat(p); err == nil {
		return 0, fs.ErrExist
	}
	if dir {
		if err := os.Mkdir(p, 0o755); err != nil {
			return 0, fmt.Errorf("create mount stub: %w", err)
		}
	} else {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			err = writeStub(f, content)
		}
		if err != nil {
			return 0, fmt.Errorf("create mount stub: %w", err)
		}
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, fmt.Errorf("create mount stub: %w", err)
	}
	return inode(fi), nil
}

// writeStub writes a file stub's content and closes it.
func writeStub(f *os.File, content []byte) error {
	_, err := f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// isStub reports whether in is still what cordon made for s: the same
// inode, an empty directory or a regular file of the size it was made
// with. The sandbox cannot write a file stub (it is bound read-only);
// a host program that rewrote it in place to the same size is not told
// apart.
func isStub(s stubRecord, in safefs.Info) bool {
	if s.Ino == 0 || in.Ino != s.Ino {
		return false
	}
	return (s.Dir && in.IsDir()) || (!s.Dir && in.Mode.IsRegular() && in.Size == s.Size)
}

// intact is stubIntact with the stub's root opened once per acquire.
func (r *registry) intact(s stubRecord) bool {
	if testhook.StubsByPath || r.roots == nil {
		return stubIntact(s)
	}
	root, rel, err := relBeneath(s.Root, s.Path)
	if err != nil {
		return false
	}
	rt, ok := r.roots[root]
	if !ok {
		if rt, err = safefs.OpenRoot(root); err != nil {
			return false
		}
		r.roots[root] = rt
	}
	in, err := rt.Lstat(rel)
	return err == nil && isStub(s, in)
}

// stubIntact reports whether the stub is still what cordon made, looked
// at beneath its root.
func stubIntact(s stubRecord) bool {
	if testhook.StubsByPath {
		fi, err := os.Lstat(s.Path)
		return err == nil && isStub(s, safefs.Info{Mode: fi.Mode(), Size: fi.Size(), Ino: inode(fi)})
	}
	r, rel, err := beneath(s.Root, s.Path)
	if err != nil {
		return false
	}
	defer r.Close()
	in, err := r.Lstat(rel)
	return err == nil && isStub(s, in)
}

// removeStub removes a stub only while it is still what cordon made,
// from its parent opened beneath its root. Anything else belongs to
// someone.
func removeStub(s stubRecord) {
	if testhook.StubsByPath {
		if stubIntact(s) {
			if s.Dir {
				syscall.Rmdir(s.Path)
			} else {
				os.Remove(s.Path)
			}
		}
		return
	}
	r, rel, err := beneath(s.Root, s.Path)
	if err != nil {
		return
	}
	defer r.Close()
	// A directory that is not empty stays (rmdir fails), as it should.
	r.RemoveIf(rel, func(in safefs.Info) bool { return isStub(s, in) })
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
