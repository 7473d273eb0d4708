package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
	"github.com/cordon-sandbox/cordon/internal/boundedread"
	"github.com/cordon-sandbox/cordon/internal/testhook"
)

// The scan for git repositories reads up to scanDirs directories on every
// launch, milliseconds on a large workspace. Its result depends only on
// the names in the directories it read, so it is kept with the stamp
// (inode and ctime) of each: while every stamp still matches, no entry was
// added, removed or renamed in any of them, and the result stands. A stat
// per directory replaces an open, a read and a close of it. When some
// stamps moved, only those directories are read again; the others answer
// from the record (what they held, which of them to enter), so a scan
// after an edit costs what the edit touched, and a scan cut short by its
// bounds leaves a record the next one starts from.
//
// The record also remembers: every repository a scan found stays in it,
// and protected, for as long as it is still there, whatever later scans
// see. A scan cut short by its bounds (a sandbox can fill the workspace
// with directories) therefore never drops a protection it had
// (docs/threat-model.md, class 11).
//
// A sandbox cannot forge a ctime, and cannot write the record (it lives in
// cordon's runtime directory, read-only in every sandbox). A directory
// changed within racyWindow of the scan could have changed within the same
// clock tick as its recorded ctime, so such a scan is kept only for what
// it found, never taken as current.
var racyWindow = 2 * time.Second

// scanVersion changes when what a record means, or how it is written,
// does.
const scanVersion = 10

// scanRecordMax bounds a record, as written and as read back: scanBytes
// of paths and names, with the numbers beside them.
var scanRecordMax = 2*scanBytes + 4<<20

type scanRecord struct {
	V      int        `json:"v"`
	Root   string     `json:"root"`
	Places []gitPlace `json:"places"`
	// Dirs are the directories the scan reached whose stamps can be
	// trusted (none changed within racyWindow of the scan): a later scan
	// reads again only those whose stamp moved.
	Dirs []dirRecord `json:"dirs"`
	// Complete: the scan was not cut short and every directory it reached
	// is in Dirs. Only then, with every stamp still matching, is Places
	// the answer without a walk.
	Complete bool `json:"complete"`
}

// cachedScan is scanGit, answered from dir when the recorded scan of root
// still holds, and never forgetting a repository that is still there. dir
// "" means no record. cut reports a scan cut short by its bounds.
func cachedScan(root, dir string) (places []gitPlace, cut bool) {
	if dir == "" {
		places, _, cut = scanGit(root, nil)
		return places, cut
	}
	name := recordName(root)
	file := filepath.Join(dir, name+".scan")
	tidyRecords(dir, time.Now())
	rec, current := loadScan(file, root)
	if rec.Root == root {
		// Used: the tidy keeps a record a launch used within recordKeep.
		now := time.Now()
		_ = os.Chtimes(file, now, now)
	}
	if current {
		return rec.Places, false
	}
	prior := make(map[string]dirRecord, len(rec.Dirs))
	for _, d := range rec.Dirs {
		prior[d.Path] = d
	}
	start := time.Now()
	places, dirs, cut := scanGit(root, prior)
	closed := slices.DeleteFunc(slices.Clone(places), func(p gitPlace) bool { return !p.Closed })
	places = slices.DeleteFunc(places, func(p gitPlace) bool { return p.Closed })
	if !testhook.ScanForgets {
		places = keepKnown(places, rec.Places, root)
	}
	if rec.Root == root {
		markFresh(places, rec.Places)
	}
	trusted := make([]dirRecord, 0, len(dirs))
	for _, d := range dirs {
		if start.Sub(time.Unix(0, d.Ctime)) < racyWindow {
			continue // too fresh to trust its stamp: read it again next time
		}
		trusted = append(trusted, d)
	}
	// A closed directory keeps the record incomplete: the next launch
	// looks at it again, whatever its parent's stamp says.
	complete := !cut && len(trusted) == len(dirs) && len(closed) == 0
	storeScan(dir, file, scanRecord{V: scanVersion, Root: root, Places: places, Dirs: trusted, Complete: complete})
	os.Remove(filepath.Join(dir, name+".json")) // version 4's record, in JSON
	return append(places, closed...), cut
}

// markFresh marks the configuration places of found that known (the
// previous record) did not have, or had with fewer names.
func markFresh(found, known []gitPlace) {
	had := map[string]uint64{}
	for _, p := range known {
		had[p.Path] |= p.Conf
	}
	for i, p := range found {
		found[i].Fresh = p.Conf &^ had[p.Path]
	}
}

// RecordFiles are the files in dir, the scan's directory, that may hold
// records of root (resolved): the scan's and the guard's (guardcache.go).
func RecordFiles(dir, root string) []string {
	n := filepath.Join(dir, recordName(root))
	return []string{n + ".scan", n + ".guard"}
}

// recordName names root's records in the scan's directory.
func recordName(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:12])
}

// keepKnown adds to found the places of an earlier scan that are still
// repositories.
func keepKnown(found, known []gitPlace, root string) []gitPlace {
	type key struct {
		path       string
		gitdir     bool
		configured bool
	}
	have := map[key]bool{}
	for _, p := range found {
		have[key{p.Path, p.Gitdir, p.Conf != 0}] = true
	}
	own := ownState()
	for _, p := range known {
		k := key{p.Path, p.Gitdir, p.Conf != 0}
		// One an earlier version found in cordon's state directory
		// (scanGit no longer enters it) is not kept either, nor a wide
		// one: the scan finds it again, from its record or by a read.
		if have[k] || p.Wide || p.Path == root || !within(p.Path, root) || within(p.Path, own) {
			continue
		}
		if p.Conf != 0 {
			// Those of its names that are still there.
			p.Conf = 0
			for i, n := range NestedNames {
				if exists(filepath.Join(p.Path, n)) {
					p.Conf |= 1 << i
				}
			}
			if p.Conf != 0 {
				have[k] = true
				found = append(found, p)
			}
			continue
		}
		p.Has = 0 // what it held then is not known now
		// One that cannot be looked at (a directory on its way closed to
		// this user) is kept: its protection then fails the launch where
		// the sandbox could open it again (Canonical.derive).
		if p.Gitdir && (isGitdir(p.Path) || unknown(filepath.Join(p.Path, "HEAD"))) ||
			!p.Gitdir && (exists(filepath.Join(p.Path, ".git")) || unknown(filepath.Join(p.Path, ".git"))) {
			have[k] = true
			found = append(found, p)
		}
	}
	return found
}

// loadScan reads the record of root; current reports whether it may be
// taken as the scan's result.
func loadScan(file, root string) (rec scanRecord, current bool) {
	b, err := boundedread.File(file, scanRecordMax, true)
	if err != nil {
		return scanRecord{}, false
	}
	rec, ok := decodeScan(b)
	if !ok || rec.Root != root {
		return scanRecord{}, false
	}
	if !rec.Complete {
		return rec, false
	}
	for _, d := range rec.Dirs {
		var st syscall.Stat_t
		if syscall.Lstat(d.Path, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR || statStamp(&st) != d.stamp {
			return rec, false
		}
	}
	return rec, true
}

// storeScan writes the record atomically; a failure only costs a rescan.
// A record over scanRecordMax drops the directories it knows, the deepest
// first, and is no longer complete: the next scan reads those again. One
// whose places alone are over it is not written, and the one before it
// stays.
func storeScan(dir, file string, rec scanRecord) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	b := encodeScan(rec)
	for len(b) > scanRecordMax && len(rec.Dirs) > 0 {
		rec.Dirs, rec.Complete = rec.Dirs[:len(rec.Dirs)/2], false
		b = encodeScan(rec)
	}
	if len(b) > scanRecordMax {
		return
	}
	_ = atomicfile.WriteFile(file, b)
}

// The record's fields (record.go):
//
//	ROOT COMPLETE NPLACES NDIRS
//	NPLACES x (PATH GITDIR HAS CONF WIDE)
//	NDIRS x (PATH INO CTIME SHAPE HAS CONF NSUB NSUB x NAME)
func scanHeader() string { return "cordon-scan " + strconv.Itoa(scanVersion) }

func encodeScan(rec scanRecord) []byte {
	w := newRecord(scanHeader())
	w.str(rec.Root)
	w.bool(rec.Complete)
	w.int(int64(len(rec.Places)))
	w.int(int64(len(rec.Dirs)))
	for _, p := range rec.Places {
		w.str(p.Path)
		w.bool(p.Gitdir)
		w.int(int64(p.Has))
		w.int(int64(p.Conf))
		w.bool(p.Wide)
	}
	for _, d := range rec.Dirs {
		w.str(d.Path)
		w.stamp(d.stamp)
		w.int(int64(d.Shape))
		w.int(int64(d.Has))
		w.int(int64(d.Conf))
		w.int(int64(len(d.Subdirs)))
		for _, n := range d.Subdirs {
			w.str(n)
		}
	}
	return w.b
}

// decodeScan reads what encodeScan wrote; ok is false for anything else,
// which costs a rescan and nothing more.
func decodeScan(b []byte) (rec scanRecord, ok bool) {
	r := readRecord(b, scanHeader())
	if r == nil {
		return scanRecord{}, false
	}
	rec.V = scanVersion
	rec.Root = r.str()
	rec.Complete = r.bool()
	places, dirs := r.count(), r.count()
	if r.bad {
		return scanRecord{}, false
	}
	if places > 0 {
		rec.Places = make([]gitPlace, 0, places)
	}
	for range places {
		rec.Places = append(rec.Places, gitPlace{Path: r.str(), Gitdir: r.bool(), Has: uint16(r.int(1<<16 - 1)), Conf: uint64(r.int(1<<len(NestedNames) - 1)), Wide: r.bool()})
	}
	if dirs > 0 {
		rec.Dirs = make([]dirRecord, 0, dirs)
	}
	for range dirs {
		d := dirRecord{Path: r.str(), stamp: r.stamp()}
		d.Shape = int8(r.int(shapeWide))
		d.Has = uint16(r.int(1<<16 - 1))
		d.Conf = uint64(r.int(1<<len(NestedNames) - 1))
		for range r.count() {
			if r.bad {
				break
			}
			d.Subdirs = append(d.Subdirs, r.str())
		}
		if r.bad {
			return scanRecord{}, false
		}
		rec.Dirs = append(rec.Dirs, d)
	}
	if !r.done() {
		return scanRecord{}, false
	}
	return rec, true
}
