//go:build !linux

package policy

import (
	"os"
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
	return stamp{Ino: uint64(st.Ino), Ctime: st.Ctimespec.Nano()}
}
