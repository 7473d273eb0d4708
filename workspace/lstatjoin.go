//go:build !(linux && (amd64 || arm64))

package workspace

import "syscall"

// lstatJoin is lstat(2) of dir + "/" + name.
func lstatJoin(_ *[512]byte, dir, name string, st *syscall.Stat_t) error {
	return syscall.Lstat(dir+"/"+name, st)
}
