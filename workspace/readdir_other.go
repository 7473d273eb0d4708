//go:build !linux

package workspace

import (
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
)

func readDir(dir string, _ []byte, maxSub int) (ents []dirent, seen int, wide bool, id stamp, err error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, 0, false, stamp{}, err
	}
	id = stampOf(fi)
	f, err := os.Open(dir)
	if err != nil {
		return nil, 0, false, id, err
	}
	defer f.Close()
	subs := 0
	for {
		batch, err := f.ReadDir(1024)
		for _, e := range batch {
			seen++
			if e.IsDir() {
				if subs++; subs > maxSub {
					return ents, seen, true, id, nil
				}
			}
			if kept(e.Name(), e.Type()) {
				ents = append(ents, dirent{name: e.Name(), typ: e.Type()})
			}
		}
		if err != nil || len(batch) == 0 {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return ents, seen, false, id, err
		}
	}
}

func stampOf(fi os.FileInfo) stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return stamp{}
	}
	return statStamp(st)
}

func statStamp(st *syscall.Stat_t) stamp {
	return stamp{Ino: uint64(st.Ino), Ctime: st.Ctimespec.Nano()} //nolint:unconvert // Ino's type differs by system
}

// hookNames lists hooks directory dir but the samples git init writes,
// which git never runs.
func hookNames(dir string, _ []byte) ([]string, error) {
	ents, err := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".sample") {
			out = append(out, e.Name())
		}
	}
	return out, err
}
