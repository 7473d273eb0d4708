package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/atomicfile"
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
const scanVersion = 5

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
	rec, current := loadScan(file, root)
	if current {
		return rec.Places, false
	}
	prior := make(map[string]dirRecord, len(rec.Dirs))
	for _, d := range rec.Dirs {
		prior[d.Path] = d
	}
	start := time.Now()
	places, dirs, cut := scanGit(root, prior)
	if !testhook.ScanForgets {
		places = keepKnown(places, rec.Places, root)
	}
	trusted := make([]dirRecord, 0, len(dirs))
	for _, d := range dirs {
		if start.Sub(time.Unix(0, d.Ctime)) < racyWindow {
			continue // too fresh to trust its stamp: read it again next time
		}
		trusted = append(trusted, d)
	}
	complete := !cut && len(trusted) == len(dirs)
	storeScan(dir, file, scanRecord{V: scanVersion, Root: root, Places: places, Dirs: trusted, Complete: complete})
	os.Remove(filepath.Join(dir, name+".json")) // version 4's record, in JSON
	return places, cut
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
		path   string
		gitdir bool
	}
	have := map[key]bool{}
	for _, p := range found {
		have[key{p.Path, p.Gitdir}] = true
	}
	for _, p := range known {
		k := key{p.Path, p.Gitdir}
		if have[k] || p.Path == root || !within(p.Path, root) {
			continue
		}
		p.Has = 0 // what it held then is not known now
		if p.Gitdir && isGitdir(p.Path) || !p.Gitdir && exists(filepath.Join(p.Path, ".git")) {
			have[k] = true
			found = append(found, p)
		}
	}
	return found
}

// loadScan reads the record of root; current reports whether it may be
// taken as the scan's result.
func loadScan(file, root string) (rec scanRecord, current bool) {
	b, err := os.ReadFile(file)
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
func storeScan(dir, file string, rec scanRecord) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	_ = atomicfile.WriteFile(file, encodeScan(rec))
}

// A record is written as NUL-terminated fields after a header line (no
// path holds a NUL): the JSON it was written in took 2.4 ms to decode for
// 300 repositories, on every launch there, and 8 ms for 1,000.
//
//	cordon-scan VERSION\n
//	ROOT COMPLETE NPLACES NDIRS
//	NPLACES x (PATH GITDIR HAS)
//	NDIRS x (PATH INO CTIME SHAPE HAS NSUB NSUB x NAME)
const scanMagic = "cordon-scan "

func encodeScan(rec scanRecord) []byte {
	b := strconv.AppendInt([]byte(scanMagic), int64(rec.V), 10)
	b = append(b, '\n')
	field := func(s string) { b = append(append(b, s...), 0) }
	num := func(n int64) { b = append(strconv.AppendInt(b, n, 10), 0) }
	flag := func(v bool) {
		if v {
			num(1)
		} else {
			num(0)
		}
	}
	field(rec.Root)
	flag(rec.Complete)
	num(int64(len(rec.Places)))
	num(int64(len(rec.Dirs)))
	for _, p := range rec.Places {
		field(p.Path)
		flag(p.Gitdir)
		num(int64(p.Has))
	}
	for _, d := range rec.Dirs {
		field(d.Path)
		b = append(strconv.AppendUint(b, d.Ino, 10), 0)
		num(d.Ctime)
		num(int64(d.Shape))
		num(int64(d.Has))
		num(int64(len(d.Subdirs)))
		for _, n := range d.Subdirs {
			field(n)
		}
	}
	return b
}

// decodeScan reads what encodeScan wrote; ok is false for anything else,
// which costs a rescan and nothing more.
func decodeScan(b []byte) (rec scanRecord, ok bool) {
	head, body, found := strings.Cut(string(b), "\n")
	if !found || head != scanMagic+strconv.Itoa(scanVersion) {
		return scanRecord{}, false
	}
	bad := false
	field := func() string {
		f, rest, found := strings.Cut(body, "\x00")
		if !found {
			bad = true
		}
		body = rest
		return f
	}
	num := func(max int64) int64 {
		n, err := strconv.ParseInt(field(), 10, 64)
		if err != nil || n < 0 || n > max {
			bad = true
		}
		return n
	}
	rec.V = scanVersion
	rec.Root = field()
	rec.Complete = num(1) == 1
	// Counts cannot exceed what the body could hold: each entry takes
	// at least two bytes.
	most := int64(len(body) / 2)
	places, dirs := num(most), num(most)
	if bad {
		return scanRecord{}, false
	}
	if places > 0 {
		rec.Places = make([]gitPlace, 0, places)
	}
	for range places {
		p := gitPlace{Path: field(), Gitdir: num(1) == 1, Has: uint16(num(1<<16 - 1))}
		rec.Places = append(rec.Places, p)
	}
	if dirs > 0 {
		rec.Dirs = make([]dirRecord, 0, dirs)
	}
	for range dirs {
		d := dirRecord{Path: field()}
		ino, err := strconv.ParseUint(field(), 10, 64)
		if err != nil {
			return scanRecord{}, false
		}
		d.Ino = ino
		d.Ctime = num(1<<63 - 1)
		d.Shape = int8(num(shapeGitdir))
		d.Has = uint16(num(1<<16 - 1))
		for range num(most) {
			if bad {
				break
			}
			d.Subdirs = append(d.Subdirs, field())
		}
		if bad {
			return scanRecord{}, false
		}
		rec.Dirs = append(rec.Dirs, d)
	}
	if bad || body != "" {
		return scanRecord{}, false
	}
	return rec, true
}
