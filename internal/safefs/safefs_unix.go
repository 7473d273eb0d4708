//go:build linux || darwin

package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// Root is an open directory that paths are resolved beneath.
type Root struct {
	fd   int
	name string // for messages only: the path it was opened by
}

// OpenRoot opens the directory dir (an absolute path) from "/", following
// no symlink in any component: callers pass paths they resolved
// themselves, so a link found now was swapped in since.
func OpenRoot(dir string) (*Root, error) {
	if !strings.HasPrefix(dir, "/") {
		return nil, pathErr("open root", dir, errors.New("not an absolute path"))
	}
	slash, err := unix.Open("/", dirFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open root", "/", err)
	}
	defer unix.Close(slash)
	rel := strings.TrimPrefix(path.Clean(dir), "/")
	if rel == "" {
		rel = "."
	}
	fd, err := openBeneath(slash, rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, explain("open root", slash, "/", rel, err)
	}
	return &Root{fd: fd, name: path.Clean(dir)}, nil
}

// Close closes the root's descriptor.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Name is the path the root was opened by.
func (r *Root) Name() string { return r.name }

func (r *Root) full(rel string) string {
	if rel == "." || rel == "" {
		return r.name
	}
	return path.Join(r.name, rel)
}

// open cleans rel and opens it beneath r.
func (r *Root) open(op, rel string, flags int, mode uint32) (int, string, error) {
	c, err := clean(rel)
	if err != nil {
		return -1, "", pathErr(op, r.full(rel), err)
	}
	fd, err := openBeneath(r.fd, c, flags, mode)
	if err != nil {
		return -1, c, explain(op, r.fd, r.name, c, err)
	}
	return fd, c, nil
}

// Open opens rel for reading (a file or a directory). It does not block
// on a FIFO a sandbox put in the file's place.
func (r *Root) Open(rel string) (*os.File, error) {
	fd, c, err := r.open("open", rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.full(c)), nil
}

// OpenFile opens rel beneath r as os.OpenFile would with flag and perm
// (os.O_RDWR, os.O_APPEND, os.O_CREATE, os.O_EXCL...), but following no
// symbolic link, not blocking on a FIFO and never taking a terminal as
// the caller's controlling one.
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, c, err := r.open("open", rel, flag|unix.O_NONBLOCK|unix.O_NOCTTY, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.full(c)), nil
}

// OpenRoot opens the directory rel beneath r as a root of its own.
func (r *Root) OpenRoot(rel string) (*Root, error) {
	fd, c, err := r.open("open", rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Root{fd: fd, name: r.full(c)}, nil
}

// Lstat describes rel without following it, its parent opened beneath r.
func (r *Root) Lstat(rel string) (Info, error) {
	c, err := clean(rel)
	if err != nil {
		return Info{}, pathErr("lstat", r.full(rel), err)
	}
	var st unix.Stat_t
	if c == "." {
		err = unix.Fstat(r.fd, &st)
		return info(&st), err
	}
	dir, base := split(c)
	pfd, err := r.parent("lstat", dir)
	if err != nil {
		return Info{}, err
	}
	defer unix.Close(pfd)
	if err := unix.Fstatat(pfd, base, &st, statFlags()); err != nil {
		return Info{}, pathErr("lstat", r.full(c), err)
	}
	return info(&st), nil
}

func statFlags() int {
	if testhook.SafeFSFollow {
		return 0
	}
	return unix.AT_SYMLINK_NOFOLLOW
}

// parent opens the directory dir (cleaned) beneath r.
func (r *Root) parent(op, dir string) (int, error) {
	fd, err := openBeneath(r.fd, dir, dirFlags, 0)
	if err != nil {
		return -1, explain(op, r.fd, r.name, dir, err)
	}
	return fd, nil
}

// entry is an entry below a root, its parent open: what Mkdir, WriteFile
// and RemoveIf act on.
type entry struct {
	pfd       int    // the parent, opened beneath the root; the caller closes it
	dir, base string // the parent's path ("." for the root) and the entry's name
	path      string // rel, cleaned
}

// entry cleans rel, which must name an entry below r (not r itself), and
// opens its parent beneath r.
func (r *Root) entry(op, rel string) (entry, error) {
	c, err := clean(rel)
	if err != nil || c == "." {
		return entry{}, pathErr(op, r.full(rel), errors.Join(err, ErrOutside))
	}
	dir, base := split(c)
	pfd, err := r.parent(op, dir)
	if err != nil {
		return entry{}, err
	}
	return entry{pfd: pfd, dir: dir, base: base, path: c}, nil
}

// Mkdir creates the directory rel (its parent must exist) in its parent
// opened beneath r. A link at rel is not followed: mkdirat fails with
// EEXIST.
func (r *Root) Mkdir(rel string, perm fs.FileMode) error {
	e, err := r.entry("mkdir", rel)
	if err != nil {
		return err
	}
	defer unix.Close(e.pfd)
	if err := unix.Mkdirat(e.pfd, e.base, uint32(perm.Perm())); err != nil {
		return pathErr("mkdir", r.full(e.path), err)
	}
	return nil
}

// MkdirAll creates rel and any missing parents, one component at a time,
// each made (mkdirat) and then opened without following in the one
// before, and returns rel opened as a root.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) (*Root, error) {
	c, err := clean(rel)
	if err != nil {
		return nil, pathErr("mkdir", r.full(rel), err)
	}
	cur, err := unix.Dup(r.fd)
	if err != nil {
		return nil, pathErr("mkdir", r.name, err)
	}
	if c == "." {
		unix.CloseOnExec(cur)
		return &Root{fd: cur, name: r.name}, nil
	}
	done := ""
	for _, comp := range strings.Split(c, "/") {
		done = path.Join(done, comp)
		next, err := openBeneath(cur, comp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(cur, comp, uint32(perm.Perm())); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openBeneath(cur, comp, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			}
		}
		if err != nil {
			err = explain("mkdir", cur, r.full(path.Dir(done)), comp, err)
			unix.Close(cur)
			return nil, err
		}
		unix.Close(cur)
		cur = next
	}
	return &Root{fd: cur, name: r.full(c)}, nil
}

// CreateExcl creates the regular file rel, which must not exist (a link
// there counts as existing), in its parent opened beneath r.
func (r *Root) CreateExcl(rel string, perm fs.FileMode) (*os.File, error) {
	fd, c, err := r.open("create", rel, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.full(c)), nil
}

// WriteFile replaces rel with data: a temporary file made in rel's parent
// (opened beneath r) is renamed over it, so neither a link at rel nor a
// hard link to rel's old content is written through. An existing file
// keeps its mode (and, for a root caller, its owner); a new one gets perm
// less the umask.
func (r *Root) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	e, err := r.entry("write", rel)
	if err != nil {
		return err
	}
	defer unix.Close(e.pfd)
	pfd, dir, base, full := e.pfd, e.dir, e.base, r.full(e.path)
	mode, owner, err := replaced(pfd, base, full, uint32(perm.Perm()))
	if err != nil {
		return err
	}
	if testhook.SafeFSFollow {
		return writeInPlace(pfd, base, full, data, mode)
	}
	create := mode // a new file: perm less the umask, by the kernel
	if owner != nil {
		create = 0o600 // until it has the old file's mode
	}
	tmp, fd, err := tempFile(pfd, base, create)
	if err != nil {
		return pathErr("write", full, err)
	}
	err = fillTemp(fd, r.full(path.Join(dir, tmp)), data, mode, owner)
	if err == nil {
		err = unix.Renameat(pfd, tmp, pfd, base)
	}
	if err != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return pathErr("write", full, err)
	}
	return nil
}

// replaced looks at what WriteFile is about to replace, base in the
// directory pfd (full in messages): a regular file gives its mode and
// owner, nothing there gives perm and no owner, and anything else (a link
// first of all) is refused.
func replaced(pfd int, base, full string, perm uint32) (mode uint32, owner *unix.Stat_t, err error) {
	var st unix.Stat_t
	switch err := unix.Fstatat(pfd, base, &st, statFlags()); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return 0, nil, pathErr("write", full, &LinkError{full})
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return 0, nil, pathErr("write", full, errors.New("not a regular file"))
	case err == nil:
		return uint32(st.Mode) & 0o7777, &st, nil
	case !errors.Is(err, unix.ENOENT):
		return 0, nil, pathErr("write", full, err)
	}
	return perm, nil, nil
}

// writeInPlace is the SafeFSFollow mutation's WriteFile: it writes
// through whatever the name points at now.
func writeInPlace(pfd int, base, full string, data []byte, mode uint32) error {
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, mode)
	if err != nil {
		return pathErr("write", full, err)
	}
	f := os.NewFile(uintptr(fd), full)
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// fillTemp writes data to the new temporary file fd (named name), gives
// it the mode (and, for a root caller, the owner) of the file it replaces,
// when there is one, syncs and closes it.
func fillTemp(fd int, name string, data []byte, mode uint32, owner *unix.Stat_t) error {
	f := os.NewFile(uintptr(fd), name)
	_, err := f.Write(data)
	if err == nil && owner != nil {
		err = unix.Fchmod(fd, mode)
		if os.Geteuid() == 0 {
			unix.Fchown(fd, int(owner.Uid), int(owner.Gid)) // best effort
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tempFile creates a new file next to base in the directory pfd.
func tempFile(pfd int, base string, mode uint32) (string, int, error) {
	prefix := "." + base
	if len(prefix) > 200 {
		prefix = prefix[:200]
	}
	for range 100 {
		b := make([]byte, 6)
		rand.Read(b)
		name := prefix + ".cordon-" + hex.EncodeToString(b)
		fd, err := unix.Openat(pfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		return name, fd, err
	}
	return "", -1, unix.EEXIST
}

// RemoveIf removes rel (a file, or an empty directory) from its parent
// opened beneath r, if keep says so of what is there now. It reports
// whether it removed it.
func (r *Root) RemoveIf(rel string, ok func(Info) bool) (bool, error) {
	e, err := r.entry("remove", rel)
	if err != nil {
		return false, err
	}
	defer unix.Close(e.pfd)
	pfd, base, c := e.pfd, e.base, e.path
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, statFlags()); err != nil {
		return false, pathErr("remove", r.full(c), err)
	}
	in := info(&st)
	if !ok(in) {
		return false, nil
	}
	flags := 0
	if in.IsDir() {
		flags = unix.AT_REMOVEDIR // fails, as it should, when not empty
	}
	if err := unix.Unlinkat(pfd, base, flags); err != nil {
		return false, pathErr("remove", r.full(c), err)
	}
	return true, nil
}

func info(st *unix.Stat_t) Info {
	m := fs.FileMode(st.Mode & 0o777)
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return Info{Mode: m, Size: st.Size, Dev: uint64(st.Dev), Ino: uint64(st.Ino), Uid: int(st.Uid), Gid: int(st.Gid)}
}

// walk opens rel beneath dirfd one component at a time: every directory
// on the way with O_NOFOLLOW|O_DIRECTORY, the last with O_NOFOLLOW.
func walk(dirfd int, rel string, flags int, mode uint32) (int, error) {
	if rel == "." {
		return unix.Openat(dirfd, ".", flags|unix.O_CLOEXEC, mode)
	}
	comps := strings.Split(rel, "/")
	cur := dirfd
	closeCur := func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}
	for _, comp := range comps[:len(comps)-1] {
		if comp == "." {
			continue
		}
		next, err := unix.Openat(cur, comp, dirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		closeCur()
		if err != nil {
			return -1, err
		}
		cur = next
	}
	fd, err := unix.Openat(cur, comps[len(comps)-1], flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	closeCur()
	return fd, err
}

// explain wraps an error of opening rel beneath dirfd (named name); when a
// link is the reason, it names the first component that is one.
func explain(op string, dirfd int, name, rel string, err error) error {
	full := path.Join(name, rel)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		if link := firstLink(dirfd, rel); link != "" {
			return pathErr(op, full, &LinkError{path.Join(name, link)})
		}
		if errors.Is(err, unix.ELOOP) {
			return pathErr(op, full, &LinkError{full}) // swapped back since
		}
	}
	return pathErr(op, full, err)
}

// firstLink finds, for the message only, the first component of rel that
// is a symlink now.
func firstLink(dirfd int, rel string) string {
	cur, err := unix.Dup(dirfd)
	if err != nil {
		return ""
	}
	defer func() { unix.Close(cur) }()
	done := ""
	for _, comp := range strings.Split(rel, "/") {
		done = path.Join(done, comp)
		var st unix.Stat_t
		if unix.Fstatat(cur, comp, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return ""
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return done
		}
		next, err := unix.Openat(cur, comp, dirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return ""
		}
		unix.Close(cur)
		cur = next
	}
	return ""
}
