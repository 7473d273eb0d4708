package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cordon-sandbox/cordon/policy"
)

// runtimeDir is the caller's private directory for cordon's own files (the
// stub registry, the empty mask file). It sits beside the private TMPDIRs
// of the workspace preset and must be owned by the caller and closed to
// others: a directory someone else made first is refused, not used.
func runtimeDir() (string, error) {
	dir := runtimeDirPath()
	if err := ensurePrivateDir(dir); err != nil {
		return "", err
	}
	return dir, nil
}

func runtimeDirPath() string { return filepath.Dir(policy.PrivateTmpDir("/")) }

func emptyFilePath() string { return filepath.Join(runtimeDirPath(), "empty") }

func maskRootPath() string { return filepath.Join(runtimeDirPath(), "masks") }

// ensurePrivateDir creates dir (and its parent when that is the runtime
// dir) with mode 0700 and checks it is a real directory owned by us.
func ensurePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrNotExist) {
			if err := ensurePrivateDir(filepath.Dir(dir)); err != nil {
				return err
			}
			return ensurePrivateDir(dir)
		}
		return fmt.Errorf("private dir: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("private dir: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("private dir %s: not a directory owned by uid %d with mode 0700; remove it and retry", dir, os.Getuid())
	}
	return nil
}

// ScanCacheDir is where the workspace preset may keep its scan for nested
// repositories between launches (policy.WorkspaceOptions.ScanCache): inside
// cordon's private runtime directory, which no sandbox can write. "" when
// that directory cannot be had; the preset then scans every time.
func ScanCacheDir() string {
	rt, err := runtimeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(rt, "scan")
}
