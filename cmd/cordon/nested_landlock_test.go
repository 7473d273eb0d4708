package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/landlock"
)

// TestRunNestedLandlock: 'cordon run' inside a landlock sandbox sees that
// it is nested (detect.Nested) and runs the command under the outer
// sandbox, which still confines it, rather than failing to build a
// second one.
func TestRunNestedLandlock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the landlock backend is Linux's")
	}
	testenv.Need(t, "Landlock ABI 3 or later", landlock.ABIError(landlock.ABI()))
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	argv, env := testenv.SubprocessArgs("TestHelperRunNested", ws)
	args := []string{"run", "--backend", "landlock", "--no-tty", "--workspace", ws}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	args = append(append(args, "--"), argv...)
	var out, errb bytes.Buffer
	code := run(context.Background(), args, nil, &out, &errb)
	require.Equal(t, 0, code, out.String()+errb.String())
	require.Contains(t, out.String(), "inner: landlock\n", errb.String())
	require.Contains(t, out.String(), "\nexit 0\n", errb.String())
	require.NotContains(t, out.String(), "ESCAPED")
	require.NoFileExists(t, filepath.Join(base, "outside"))
}

// TestHelperRunNested is 'cordon run' inside the landlock sandbox of
// TestRunNestedLandlock.
func TestHelperRunNested(t *testing.T) {
	ws := testenv.InSubprocess(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"run", "--workspace", ws, "--no-tty", "--", "sh", "-c",
		`echo "inner: $CORDON_SANDBOX"; echo x > ../outside 2>/dev/null && echo ESCAPED; true`}, nil, &out, &errb)
	fmt.Printf("%s%sexit %d\n", out.String(), errb.String(), code)
}
