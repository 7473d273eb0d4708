package launcher

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// runtimeDir is the caller's private directory for the launcher's own files
// (masks, the empty mask file): a subdirectory of
// cordon's per-user state directory (internal/state), which every sandbox
// has denied.
func runtimeDir() (string, error) { return state.Sub(state.Run) }

func runtimeDirPath() string { return filepath.Join(state.Path(), state.Run) }

func emptyFilePath() string { return filepath.Join(runtimeDirPath(), "empty") }

func maskRootPath() string { return filepath.Join(runtimeDirPath(), "masks") }

// ensurePrivateDir creates dir, and its missing parents, with mode 0700 and
// checks each is a real directory owned by us; a loosened mode is repaired
// (a sandbox may chmod its own TMPDIR; that must not fail later launches).
func ensurePrivateDir(dir string) error {
	if _, err := os.Lstat(filepath.Dir(dir)); errors.Is(err, fs.ErrNotExist) {
		if err := ensurePrivateDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	return state.Private(dir)
}

// ScanCacheDir is where the workspace preset may keep its scan for nested
// repositories between launches (workspace.Options.ScanCache): inside
// cordon's state directory, which no sandbox can write. "" when that
// directory cannot be had; the preset then scans every time.
func ScanCacheDir() string {
	d, err := state.Sub(state.Scan)
	if err != nil {
		return ""
	}
	return d
}
