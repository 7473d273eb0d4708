//go:build !linux

package workspace

import (
	"os"
	"strings"
	"syscall"
)

func readDir(dir string, _ []byte) ([]dirent, stamp, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, stamp{}, err
	}
	id := stampOf(fi)
	ents, err := os.ReadDir(dir)
	out := make([]dirent, 0, len(ents))
	for _, e := range ents {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	return out, id, err
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
