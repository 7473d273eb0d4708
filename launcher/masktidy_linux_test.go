package launcher

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/state"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestTidyMasks: masks no launch touched for maskKeep that no mount
// namespace mounts go, with what killed launches and cut-short tidies
// left; touched ones stay; nothing else in the directory is touched;
// once a day.
func TestTidyMasks(t *testing.T) {
	defer func(b time.Duration) { maskTidyBudget = b }(maskTidyBudget)
	maskTidyBudget = time.Hour // a loaded machine must not cut the tidy short
	root := filepath.Join(t.TempDir(), "run", "masks")
	require.NoError(t, ensurePrivateDir(root))
	t.Cleanup(func() { removeMask(root) })
	old, touched := "0123456789abcdef01234567", "89abcdef0123456789abcdef"
	for _, n := range []string{old, touched, "empty"} {
		require.NoError(t, buildMask(root, filepath.Join(root, n), testMask()))
	}
	later := time.Now().Add(maskKeep + time.Hour)
	// Touched by a launch an hour before the tidy.
	at := unix.NsecToTimespec(later.Add(-time.Hour).UnixNano())
	require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(root, touched), []unix.Timespec{at, at}, unix.AT_SYMLINK_NOFOLLOW))
	require.NoError(t, os.Mkdir(filepath.Join(root, "build-1-2"), 0o700))     // a launch killed while it built
	require.NoError(t, os.Mkdir(filepath.Join(root, maskTrash+"x-1"), 0o111)) // a removal cut short
	others := []string{"not-a-mask", "0123456789ABCDEF01234567"}
	for _, n := range others {
		require.NoError(t, os.Mkdir(filepath.Join(root, n), 0o700))
	}
	// Links where trash would be: removed, never followed.
	outside := t.TempDir()
	outFile := filepath.Join(outside, "f")
	require.NoError(t, os.WriteFile(outFile, nil, 0o444))
	require.NoError(t, os.Chmod(outside, 0o555))
	t.Cleanup(func() { os.Chmod(outside, 0o700) })
	require.NoError(t, os.Symlink(outside, filepath.Join(root, maskTrash+"dir")))
	require.NoError(t, os.Symlink(outFile, filepath.Join(root, maskTrash+"file")))

	assert.ElementsMatch(t, []string{old, "empty", "build-1-2"}, tidyMasks(root, later))
	assert.DirExists(t, filepath.Join(root, touched), "a launch used it within maskKeep")
	for _, n := range others {
		assert.DirExists(t, filepath.Join(root, n))
	}
	// Removed before the tidy returns: a launch that execs bwrap next
	// would leave a goroutine's work undone.
	ents, _ := filepath.Glob(filepath.Join(root, maskTrash+"*"))
	assert.Empty(t, ents)
	assert.NoDirExists(t, filepath.Join(root, old))
	for p, mode := range map[string]os.FileMode{outside: 0o555, outFile: 0o444} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm(), "%s: the tidy followed a link", p)
	}
	assert.Nil(t, tidyMasks(root, later), "once a day")

	// Made within maskKeep: it stays.
	require.NoError(t, buildMask(root, filepath.Join(root, old), testMask()))
	require.NoError(t, os.Remove(filepath.Join(root, ".tidied")))
	assert.Empty(t, tidyMasks(root, time.Now().Add(maskKeep-time.Minute)))
	assert.DirExists(t, filepath.Join(root, old))
}

func testMask() bwrap.Mask {
	return bwrap.Mask{Key: "test", Entries: []bwrap.MaskEntry{{Rel: "a", Dir: true}, {Rel: "b/c"}}}
}

// ownStateDir gives the test a state directory of its own, whose masks
// (mode 0111) its cleanup can remove.
func ownStateDir(t *testing.T) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { removeMask(dir) })
	t.Setenv(state.EnvDir, dir)
}

// TestMasksHeldWhileTheSandboxRuns, through both backends that mount
// masks: a tidy long after the launch touched its masks, while the
// sandbox runs, removes none, because the sandbox mounts them, and the
// sandbox keeps what is mounted inside them; once it has ended the tidy
// removes them.
func TestMasksHeldWhileTheSandboxRuns(t *testing.T) {
	for _, backend := range []string{BackendBwrap, BackendNative} {
		t.Run(backend, func(t *testing.T) {
			testenv.RequireBackend(t, backend)
			ownStateDir(t)
			defer func(b time.Duration) { maskTidyBudget = b }(maskTidyBudget)
			maskTidyBudget = time.Hour
			// A denied directory with a readable root inside: it gets a mask.
			dir := t.TempDir()
			secret := filepath.Join(dir, "denied", "secret")
			open := filepath.Join(dir, "denied", "open")
			require.NoError(t, os.MkdirAll(open, 0o755))
			require.NoError(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(open, "f"), []byte("OPEN"), 0o644))
			fifo := filepath.Join(dir, "go")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			p := policy.FsSandboxPolicy{
				DeniedRoots:   []string{filepath.Join(dir, "denied")},
				ReadonlyRoots: []string{open},
				WritableRoots: []string{t.TempDir()},
			}
			c := Command(p, "sh", "-c", `echo up; read x < "$0"; cat "$1" 2>&1 || echo REFUSED; cat "$2"`, fifo, secret, filepath.Join(open, "f"))
			c.Backend = backend
			r, w, err := os.Pipe()
			require.NoError(t, err)
			c.Stdout, c.Stderr = w, w
			require.NoError(t, c.Start())
			w.Close()
			defer r.Close()
			br := bufio.NewReader(r)
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "up\n", line)

			root := maskRootPath()
			masks, err := filepath.Glob(filepath.Join(root, "[0-9a-f]*"))
			require.NoError(t, err)
			require.NotEmpty(t, masks)
			later := time.Now().Add(maskKeep + time.Hour)
			stamp := filepath.Join(root, ".tidied")
			os.Remove(stamp) // the launch's own tidy
			assert.Empty(t, tidyMasks(root, later), "the running sandbox mounts its masks")
			require.NoError(t, os.Remove(stamp))

			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			f.WriteString("\n")
			f.Close()
			rest, err := io.ReadAll(br)
			require.NoError(t, err)
			require.NoError(t, c.Wait())
			assert.NotContains(t, string(rest), "SECRET")
			assert.Contains(t, string(rest), "REFUSED")
			assert.Contains(t, string(rest), "OPEN", "what is mounted inside the mask stayed")

			gone := tidyMasks(root, later)
			assert.Len(t, gone, len(masks), "the sandbox has ended: its masks go")
		})
	}
}
