package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordon-sandbox/cordon/internal/state"
)

// TestMain gives the tests a state directory of their own: appends keep
// cordon's own anchors there.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cordon-audit-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(state.EnvDir, filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
