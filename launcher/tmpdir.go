package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// A private TMPDIR (Cmd.TmpDir: the workspace preset gives one per
// workspace, in cordon's state directory) is kept between launches, as
// /tmp is between boots, and removed once no launch has used it for
// tmpKeep: the directory of a workspace long gone, or of one not used for
// a month, holds nothing anyone will read again. /tmp's own cleaners go by
// the same idea (systemd-tmpfiles ages /tmp's files by their times).
//
// What counts as use is what the launcher does, not what a sandbox does:
// each launch touches its TMPDIR, so its change time is never older than
// the latest launch, and no sandbox can set a change time back (it can set
// the modification time; the age is the later of the two). A launch holds
// a shared lock for as long as its sandbox runs, and the tidy removes only
// a directory whose lock it can take exclusively, after looking at its age
// again under that lock: a sandbox that has run for a month keeps its
// TMPDIR. The lock is a file beside the directory (.NAME.lock), where no
// sandbox reaches: a lock on the directory itself would let a sandbox
// hold it against later launches, and make a program inside that locks
// its TMPDIR wait on its own launcher. A launch that hands its process
// over to bwrap (Cmd.Exec) gives up the lock with it (it is never handed
// in): its sandbox has only the touch, a month.
//
// The tidy runs at most once per tmpTidyEvery and per user, at a launch,
// for at most tmpTidyBudget: a directory to remove is renamed aside first
// (instant, and what a launch then creates is a new directory), then
// removed beside the sandbox, however long that takes; a process that
// ends meanwhile leaves the rest to the next tidy.
var (
	tmpKeep      = 30 * 24 * time.Hour
	tmpTidyEvery = 24 * time.Hour
	tmpLockWait  = 100 * time.Millisecond
	// tmpTidyMax bounds the entries one tidy looks at: a state directory
	// used for years still costs a launch's background a bounded time.
	tmpTidyMax = 10000
	// tmpTidyBudget bounds the time a tidy adds to the launch that runs
	// it; the removals themselves run beside the sandbox.
	tmpTidyBudget = 100 * time.Millisecond
)

// tmpTrash starts the names of directories being removed.
const tmpTrash = ".gone-"

// holdTmpDir makes the private TMPDIR dir (0700, ours), takes the shared
// lock that keeps the tidy away from it while the sandbox runs, and
// touches it. It returns the lock, always close-on-exec: it is the
// launcher's, never handed into a sandbox; nil where the state directory
// cannot be written.
func holdTmpDir(dir string) (*os.File, error) {
	for try := 0; ; try++ {
		if err := ensurePrivateDir(dir); err != nil {
			return nil, err
		}
		lock, err := lockTmpDir(dir, false)
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
			// Inside a sandbox (a nested cordon run), where the state
			// directory is read-only: the enclosing launch holds this
			// TMPDIR, its workspace's, and no tidy runs from here.
			return nil, ensurePrivateDir(dir)
		}
		if err != nil {
			return nil, err
		}
		if lock == nil {
			// A tidy set the directory aside meanwhile: make it again.
			if try < 3 {
				continue
			}
			return nil, errors.New("it keeps being removed")
		}
		if err := touchDir(dir); err != nil {
			lock.Close()
			if try < 3 && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		return lock, nil
	}
}

// lockTmpDir opens dir's lock file and takes its shared lock (the tidy's
// exclusive one when exclusive: then without waiting, nil when it is
// held). It returns nil too when the file was removed before the lock was
// had: the directory it stood for is gone.
func lockTmpDir(dir string, exclusive bool) (*os.File, error) {
	name := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if exclusive {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	} else {
		err = lockShared(f)
	}
	if err != nil {
		f.Close()
		if exclusive {
			return nil, nil
		}
		return nil, err
	}
	var st, at unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || unix.Lstat(name, &at) != nil || st.Dev != at.Dev || st.Ino != at.Ino {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// touchDir sets dir's times to now, through a descriptor opened without
// following a link.
func touchDir(dir string) error {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	now := time.Now().UnixNano()
	return unix.Futimes(int(f.Fd()), []unix.Timeval{unix.NsecToTimeval(now), unix.NsecToTimeval(now)})
}

// lockShared takes f's shared lock, waiting up to tmpLockWait for an
// exclusive one to go (only a tidy takes one, for a rename).
func lockShared(f *os.File) error {
	for end := time.Now().Add(tmpLockWait); ; time.Sleep(time.Millisecond) {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(end) {
			return fmt.Errorf("lock %s: still held by a tidy after %v", f.Name(), tmpLockWait)
		}
	}
}

// tidyTmpDirs removes the private TMPDIRs in parent (the state
// directory's tmp) that no launch has used for tmpKeep before now, and
// what earlier tidies left half-removed, unless a tidy ran there within
// tmpTidyEvery. It returns the names it removed.
func tidyTmpDirs(parent string, now time.Time) []string {
	if !state.Due(parent, now, tmpTidyEvery) {
		return nil
	}
	d, err := os.Open(parent)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(tmpTidyMax)
	d.Close()
	var gone, trash []string
	end := time.Now().Add(tmpTidyBudget)
	for _, n := range names {
		if time.Now().After(end) {
			break // the rest at the next tidy
		}
		switch {
		case len(n) > len(tmpTrash) && n[:len(tmpTrash)] == tmpTrash:
			trash = append(trash, n)
		case len(n) == 18 && n[0] == '.' && n[13:] == ".lock" && isTmpName(n[1:13]):
			// A lock whose directory is gone (removed by hand).
			if p := filepath.Join(parent, n[1:13]); missing(p) {
				if lock, err := lockTmpDir(p, true); err == nil && lock != nil {
					if missing(p) {
						os.Remove(lock.Name())
					}
					lock.Close()
				}
			}
		case isTmpName(n):
			if t := setAside(parent, n, now); t != "" {
				gone = append(gone, n)
				trash = append(trash, t)
			}
		}
	}
	if len(trash) > 0 {
		go func() {
			for _, t := range trash {
				removeTree(filepath.Join(parent, t))
			}
		}()
	}
	return gone
}

// isTmpName reports whether n is named as workspace.PrivateTmpDir names
// a TMPDIR: 12 lower-case hexadecimal digits.
func isTmpName(n string) bool {
	if len(n) != 12 {
		return false
	}
	for _, c := range n {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// setAside renames parent/name to a trash name when it is a directory of
// ours that no launch has used for tmpKeep, judged under its exclusive
// lock, and returns that name ("" when it stays).
func setAside(parent, name string, now time.Time) string {
	p := filepath.Join(parent, name)
	if !unused(p, now) {
		return ""
	}
	lock, err := lockTmpDir(p, true)
	if err != nil || lock == nil {
		return "" // a launch's sandbox runs there
	}
	defer lock.Close()
	if !unused(p, now) {
		return ""
	}
	var r [6]byte
	rand.Read(r[:])
	t := tmpTrash + name + "-" + hex.EncodeToString(r[:])
	if os.Rename(p, filepath.Join(parent, t)) != nil {
		return ""
	}
	os.Remove(lock.Name())
	return t
}

// unused reports whether p is a directory of ours whose modification and
// change times are both older than tmpKeep before now.
func unused(p string, now time.Time) bool {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return false
	}
	last := time.Unix(st.Mtim.Unix())
	if c := time.Unix(st.Ctim.Unix()); c.After(last) {
		last = c
	}
	return now.Sub(last) > tmpKeep
}

func missing(p string) bool {
	_, err := os.Lstat(p)
	return errors.Is(err, os.ErrNotExist)
}
