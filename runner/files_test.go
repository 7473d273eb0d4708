package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/permission"
)

// TestFileToolsRefuseLinkSwappedAfterDecision swaps a directory on the
// path for a link out of the workspace while the call waits for approval,
// as a sandboxed command could: the tools refuse, nothing outside changes.
func TestFileToolsRefuseLinkSwappedAfterDecision(t *testing.T) {
	r, ws, _ := newRunner(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outside, ".bashrc"), []byte("original\n"), 0o644))
	dir := filepath.Join(ws, "dir")
	swap := func() {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".bashrc"), []byte("decoy\n"), 0o600))
		r.Approver = ApproverFunc(func(context.Context, *permission.Call, permission.Decision) (bool, error) {
			require.NoError(t, os.Rename(dir, dir+".real"))
			require.NoError(t, os.Symlink(outside, dir))
			return true, nil
		})
	}
	unswap := func() {
		require.NoError(t, os.Remove(dir))
		require.NoError(t, os.RemoveAll(dir+".real"))
	}
	ctx := context.Background()
	for _, req := range []permission.Request{
		call("write_file", map[string]any{"path": "dir/.bashrc", "content": "pwned\n"}),
		call("write_file", map[string]any{"path": "dir/new/x", "content": "pwned\n"}),
		call("edit_file", map[string]any{"path": "dir/.bashrc", "old_string": "decoy", "new_string": "pwned"}),
	} {
		swap()
		res := r.Run(ctx, req)
		require.Equal(t, Failed, res.Outcome, "%s: %s", req.Name, res.Output)
		require.Contains(t, res.Error, dir+" is a symbolic link")
		unswap()
	}
	b, _ := os.ReadFile(filepath.Join(outside, ".bashrc"))
	require.Equal(t, "original\n", string(b))
	require.NoDirExists(t, filepath.Join(outside, "new"))

	// Reads are allowed without approval: the handler itself meets the link.
	require.NoError(t, os.Symlink(outside, dir))
	out, errText := r.execute(ctx, &permission.Call{Tool: permission.ToolReadFile, Path: "dir/.bashrc", Resolved: filepath.Join(dir, ".bashrc")})
	require.Empty(t, out)
	require.Contains(t, errText, dir+" is a symbolic link")
}

func TestWriteKeepsModeAndRefusesFIFO(t *testing.T) {
	r, ws, _ := newRunner(t)
	r.Approver = &countingApprover{answer: true}
	ctx := context.Background()
	p := filepath.Join(ws, "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("echo a\n"), 0o750))
	res := r.Run(ctx, call("write_file", map[string]any{"path": "run.sh", "content": "echo b\n"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), fi.Mode().Perm())
	require.NoError(t, unix.Mkfifo(filepath.Join(ws, "fifo"), 0o644))
	res = r.Run(ctx, call("read_file", map[string]any{"path": "fifo"}))
	require.Equal(t, Failed, res.Outcome)
	require.Contains(t, res.Error, "not a regular file")
}

// TestReadListsDirectoryWithinBound fills a directory past what a listing
// may return, as a sandboxed command can at no cost: read_file of it must
// return at most MaxReadBytes of names, and say it cut them, like a file.
func TestReadListsDirectoryWithinBound(t *testing.T) {
	r, ws, _ := newRunner(t)
	dir := filepath.Join(ws, "many")
	require.NoError(t, os.Mkdir(dir, 0o755))
	long := strings.Repeat("x", 200)
	n := MaxReadBytes/len(long) + 100
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s%05d", long, i)), nil, 0o644))
	}
	res := r.Run(context.Background(), call("read_file", map[string]any{"path": "many"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	require.LessOrEqual(t, len(res.Output), MaxReadBytes+100, "a listing of %d names came back whole", n)
	require.Contains(t, res.Output, "[listing cut at")
	names := strings.Split(res.Output, "\n")
	require.True(t, sort.StringsAreSorted(names[:len(names)-1]))

	// A directory within the bound is listed whole, as before.
	res = r.Run(context.Background(), call("read_file", map[string]any{"path": "."}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	require.Equal(t, "many\nnotes.txt", res.Output)
}

// TestEditRefusesFileOverBound edits a file larger than read_file returns:
// edit_file must not write back the first MaxReadBytes and the cut marker
// in place of the whole file (a 307,211-byte file became 262,166 bytes,
// reported as a success). It refuses, names the file, its size and the
// bound and says what to do instead, and leaves the file as it was.
func TestEditRefusesFileOverBound(t *testing.T) {
	r, ws, _ := newRunner(t)
	r.Approver = &countingApprover{answer: true}
	ctx := context.Background()
	for _, size := range []int{MaxReadBytes + 1, 307211} {
		name := fmt.Sprintf("big-%d.txt", size)
		p := filepath.Join(ws, name)
		// The text to replace is near the start, inside what a read returns.
		orig := []byte("TODO\n" + strings.Repeat("x", size-len("TODO\n")-len("\nend\n")) + "\nend\n")
		require.Len(t, orig, size)
		require.NoError(t, os.WriteFile(p, orig, 0o644))

		res := r.Run(ctx, call("edit_file", map[string]any{"path": name, "old_string": "TODO", "new_string": "DONE"}))
		require.Equal(t, Failed, res.Outcome, "edit of a %d-byte file: %s", size, res.Output)
		require.Contains(t, res.Error, name)
		require.Contains(t, res.Error, fmt.Sprintf("%d bytes", size))
		require.Contains(t, res.Error, fmt.Sprintf("%d", MaxReadBytes))
		require.Contains(t, res.Error, "bash")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, len(orig), len(b), "edit_file changed the size of a %d-byte file", size)
		require.True(t, bytes.Equal(orig, b), "edit_file changed a %d-byte file", size)
	}
}

// TestEditFileAtBound edits a file of exactly MaxReadBytes: it is read
// whole, so the edit lands and nothing else in the file changes.
func TestEditFileAtBound(t *testing.T) {
	r, ws, _ := newRunner(t)
	r.Approver = &countingApprover{answer: true}
	p := filepath.Join(ws, "edge.txt")
	body := strings.Repeat("y", MaxReadBytes-len("TODO\n")-len("\nend\n"))
	orig := "TODO\n" + body + "\nend\n"
	require.Len(t, orig, MaxReadBytes)
	require.NoError(t, os.WriteFile(p, []byte(orig), 0o644))

	res := r.Run(context.Background(), call("edit_file", map[string]any{"path": "edge.txt", "old_string": "end", "new_string": "the end"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "TODO\n"+body+"\nthe end\n", string(b))
	require.NotContains(t, string(b), "[cut at")

	// read_file still returns at most the bound, and says it cut.
	res = r.Run(context.Background(), call("read_file", map[string]any{"path": "edge.txt"}))
	require.Equal(t, Succeeded, res.Outcome, res.Error)
	require.Equal(t, string(b[:MaxReadBytes])+fmt.Sprintf("\n[cut at %d bytes]", MaxReadBytes), res.Output)
}
