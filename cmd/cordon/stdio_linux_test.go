package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// cordon run ... < DIR is refused before anything runs: exit 125, the
// descriptor named with what it is and where.
func TestRunRefusesADirectoryOnStdin(t *testing.T) {
	ws := t.TempDir()
	dir, err := os.Open(filepath.Dir(ws))
	require.NoError(t, err)
	defer dir.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"run", "--workspace", ws, "--", "sh", "-c", "touch " + filepath.Join(ws, "ran")}, dir, &out, &errb)
	require.Equal(t, 125, code, errb.String())
	require.Contains(t, errb.String(), "stdin is a directory ("+filepath.Dir(ws)+")")
	require.NoFileExists(t, filepath.Join(ws, "ran"))
}
