package launcher

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/bwrap"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/internal/testhook"
	"github.com/cordon-sandbox/cordon/policy"
)

// TestTidyMasks: masks made more than maskKeep ago that no live launch
// mounts go, with what killed launches and cut-short tidies left; held
// ones and fresh ones stay; nothing else in the directory is touched;
// once a day.
func TestTidyMasks(t *testing.T) {
	defer func(b time.Duration) { maskTidyBudget = b }(maskTidyBudget)
	maskTidyBudget = time.Hour // a loaded machine must not cut the tidy short
	root := filepath.Join(t.TempDir(), "run", "masks")
	require.NoError(t, ensurePrivateDir(root))
	t.Cleanup(func() { removeMask(root) })
	old, held := "0123456789abcdef01234567", "89abcdef0123456789abcdef"
	for _, n := range []string{old, held, "empty"} {
		require.NoError(t, buildMask(root, filepath.Join(root, n), testMask()))
	}
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

	later := time.Now().Add(maskKeep + time.Hour)
	assert.ElementsMatch(t, []string{old, "empty", "build-1-2"}, tidyMasks(root, later, map[string]bool{held: true}))
	assert.DirExists(t, filepath.Join(root, held), "a live launch mounts it")
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
	assert.Nil(t, tidyMasks(root, later, nil), "once a day")

	// Made within maskKeep: it stays.
	require.NoError(t, buildMask(root, filepath.Join(root, old), testMask()))
	require.NoError(t, os.Remove(filepath.Join(root, ".tidied")))
	assert.Empty(t, tidyMasks(root, time.Now().Add(maskKeep-time.Minute), nil))
	assert.DirExists(t, filepath.Join(root, old))
}

func testMask() bwrap.Mask {
	return bwrap.Mask{Key: "test", Entries: []bwrap.MaskEntry{{Rel: "a", Dir: true}, {Rel: "b/c"}}}
}

// heldNow reads the registry as a launch would: the masks live launches
// mount.
func heldNow(t *testing.T) map[string]bool {
	t.Helper()
	r, err := openRegistry()
	require.NoError(t, err)
	defer r.unlock()
	return r.heldMasks()
}

// TestMasksHeldWhileTheSandboxRuns, through both backends that mount
// masks: a launch lists the masks it mounts in the registry from its
// start to its end, so a tidy long after, while it runs, removes none and
// the sandbox keeps what is mounted inside them; once it has ended the
// tidy removes them, and its holder file is gone.
func TestMasksHeldWhileTheSandboxRuns(t *testing.T) {
	for _, backend := range []string{BackendBwrap, BackendNative} {
		t.Run(backend, func(t *testing.T) {
			testenv.RequireBackend(t, backend)
			ownRegistry(t)
			t.Cleanup(func() { testhook.SkipMaskMountCheck = false })
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
			held := heldNow(t)
			for _, m := range masks {
				assert.True(t, held[filepath.Base(m)], "the running launch lists %s", m)
			}
			// Each wall alone keeps them: the registry without the look at
			// the mounts, the mounts with a registry that says nothing.
			stamp := filepath.Join(root, ".tidied")
			testhook.SkipMaskMountCheck = true
			assert.Empty(t, tidyMasks(root, later, held), "the registry lists the running sandbox's masks")
			testhook.SkipMaskMountCheck = false
			require.NoError(t, os.Remove(stamp))
			assert.Empty(t, tidyMasks(root, later, nil), "the running sandbox mounts its masks")
			require.NoError(t, os.Remove(stamp))
			assert.Empty(t, tidyMasks(root, later, held))

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

			assert.Empty(t, heldNow(t), "the sandbox has ended")
			holders, _ := filepath.Glob(filepath.Join(filepath.Dir(root), "stubs", "*.json"))
			assert.Empty(t, holders, "nothing left of the launch in the registry")
			gone := tidyMasks(root, later.Add(maskTidyEvery), heldNow(t))
			assert.Len(t, gone, len(masks), "the sandbox has ended: its masks go")
		})
	}
}

// requireListsMasks checks that the launch at pid lists masks in its
// holder file, and that a launch now reads them as held.
func requireListsMasks(t *testing.T, pid int) {
	t.Helper()
	dir, err := registryDir()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(pid)+"-*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.True(t, holderAlive(filepath.Base(files[0])))
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var h holderFile
	require.NoError(t, json.Unmarshal(b, &h))
	require.NotEmpty(t, h.Masks)
	held := heldNow(t)
	for _, m := range h.Masks {
		require.True(t, held[m], m)
	}
}

// TestHoldersOfAnotherPidNamespace: a holder written in another pid
// namespace (a launch under 'unshare -p', or in a container sharing
// HOME) names a pid that means nothing here: it is never judged ended,
// nor removed, and its masks stay held; one of this namespace whose
// process has ended goes.
func TestHoldersOfAnotherPidNamespace(t *testing.T) {
	require.NotZero(t, selfPidNS())
	dir := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	pid := dead.Process.Pid // ended and reaped: no process has it now
	name := strconv.Itoa(pid) + "-1-1.json"
	foreign := "9" + name
	require.NoError(t, writeHolder(filepath.Join(dir, foreign), holderFile{Masks: []string{"aaaaaaaaaaaaaaaaaaaaaaaa"}, PidNS: selfPidNS() + 1}))
	require.NoError(t, writeHolder(filepath.Join(dir, name), holderFile{Masks: []string{"bbbbbbbbbbbbbbbbbbbbbbbb"}, PidNS: selfPidNS()}))
	r := &registry{dir: dir}
	r.load("")
	assert.Equal(t, map[string]bool{"aaaaaaaaaaaaaaaaaaaaaaaa": true}, r.heldMasks())
	assert.FileExists(t, filepath.Join(dir, foreign))
	assert.NoFileExists(t, filepath.Join(dir, name), "ended in this namespace, holding no stubs")
	hs := r.holders("")
	require.Len(t, hs, 1)
	assert.True(t, hs[0].alive)
	assert.True(t, hs[0].foreign)
}
