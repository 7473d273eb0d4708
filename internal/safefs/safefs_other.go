//go:build !linux && !darwin

package safefs

import (
	"errors"
	"io/fs"
	"os"
)

// On other systems cordon has no sandbox and no file tools run; every
// operation fails rather than fall back to following paths.
var errUnsupported = errors.New("safefs: not supported on this system")

type Root struct{}

type WalkFunc func(rel string, typ fs.FileMode) error

func OpenRoot(dir string) (*Root, error)           { return nil, pathErr("open root", dir, errUnsupported) }
func (r *Root) Close() error                       { return errUnsupported }
func (r *Root) Name() string                       { return "" }
func (r *Root) Open(rel string) (*os.File, error)  { return nil, errUnsupported }
func (r *Root) OpenRoot(rel string) (*Root, error) { return nil, errUnsupported }
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	return nil, errUnsupported
}
func (r *Root) Lstat(rel string) (Info, error)                       { return Info{}, errUnsupported }
func (r *Root) Mkdir(rel string, perm fs.FileMode) error             { return errUnsupported }
func (r *Root) MkdirAll(rel string, perm fs.FileMode) (*Root, error) { return nil, errUnsupported }
func (r *Root) CreateExcl(rel string, perm fs.FileMode) (*os.File, error) {
	return nil, errUnsupported
}
func (r *Root) WriteFile(rel string, data []byte, perm fs.FileMode) error { return errUnsupported }
func (r *Root) RemoveIf(rel string, ok func(Info) bool) (bool, error)     { return false, errUnsupported }
func (r *Root) Walk(rel string, fn WalkFunc) error                        { return errUnsupported }
