package workspace

import (
	"bytes"
	"io/fs"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readDir lists a directory with getdents64 and the types it reports,
// without os.ReadDir's sorting, allocations per entry and poller
// registration: the bounded scan of a workspace calls it on every
// directory, on every launch. It keeps only the entries the scan looks at
// (kept), and stops at the first subdirectory past maxSub (wide): a
// directory a sandbox filled with subdirectories costs a bounded read and
// bounded memory. seen counts the entries read.
func readDir(dir string, buf []byte, maxSub int) (ents []dirent, seen int, wide bool, id stamp, err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, false, stamp{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, false, stamp{}, err
	}
	id = stamp{Ino: st.Ino, Ctime: st.Ctim.Nano()}
	subs := 0
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return ents, seen, false, id, err
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			rec := buf[off:]
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			typ := rec[18]
			name := rec[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			seen++
			t := direntType(typ, dir, string(name))
			if t.IsDir() {
				if subs++; subs > maxSub {
					return ents, seen, true, id, nil
				}
			}
			if kept(string(name), t) {
				ents = append(ents, dirent{name: string(name), typ: t})
			}
		}
	}
}

func direntType(t uint8, dir, name string) fs.FileMode {
	switch t {
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_REG:
		return 0
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_UNKNOWN: // some filesystems do not fill it in
		if fi, err := os.Lstat(dir + "/" + name); err == nil {
			return fi.Mode().Type()
		}
	}
	return fs.ModeIrregular
}

func statStamp(st *syscall.Stat_t) stamp { return stamp{Ino: st.Ino, Ctime: st.Ctim.Nano()} }

// hookNames lists hooks directory dir (following a link to it, as git
// does) but the samples git init writes, which git never runs: one
// getdents64 for a directory of samples, and no string made for them.
func hookNames(dir string, buf []byte) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return out, err
		}
		for off := 0; off < n; {
			rec := buf[off:]
			reclen := int(*(*uint16)(unsafe.Pointer(&rec[16])))
			name := rec[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if !bytes.HasSuffix(name, []byte(".sample")) && string(name) != "." && string(name) != ".." {
				out = append(out, string(name))
			}
		}
	}
}
