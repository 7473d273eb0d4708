package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/safefs"
	"github.com/cordon-sandbox/cordon/permission"
)

// Limits keep one tool result small enough for a model's context.
const (
	MaxReadBytes   = 256 << 10
	MaxGlobMatches = 1000
)

// maxGlobVisits bounds the entries one glob looks at, matched or not: the
// walk runs outside the sandbox, over a tree a sandbox may have filled.
var maxGlobVisits = 1_000_000

// FileHandlers returns the read_file, write_file, edit_file and glob
// handlers. They act on call.Resolved, the symlink-free path the decision
// was made on, opened beneath the workspace by the kernel at the moment of
// the call (internal/safefs): a bash command running in the sandbox at the
// same time may swap any directory on the path for a link, and the handler
// then refuses the path instead of following it. decide explains; the
// kernel's answer at open time decides.
func FileHandlers(d *permission.Decider) map[string]Handler {
	return map[string]Handler{
		permission.ToolReadFile:  readFile(d),
		permission.ToolWriteFile: writeFile(d),
		permission.ToolEditFile:  editFile(d),
		permission.ToolGlob:      globHandler(d),
	}
}

// beneath opens the workspace and returns call.Resolved relative to it.
func beneath(d *permission.Decider, call *permission.Call, op string) (*safefs.Root, string, error) {
	ws := d.Workspace()
	rel, err := filepath.Rel(ws, call.Resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, "", fmt.Errorf("%s %s: %s is not inside the workspace %s", op, call.Path, call.Resolved, ws)
	}
	root, err := safefs.OpenRoot(ws)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	return root, filepath.ToSlash(rel), nil
}

func readFile(d *permission.Decider) Handler {
	return func(_ context.Context, call *permission.Call) (string, error) {
		text, whole, _, err := load(d, call, "read")
		if err != nil || whole {
			return text, err
		}
		return text + fmt.Sprintf("\n[cut at %d bytes]", MaxReadBytes), nil
	}
}

// load reads what call.Resolved names: a directory's listing (for a read;
// an edit refuses a directory), or a regular file's first MaxReadBytes.
// whole is false when the file goes on past them; size is then its size
// as far as it is known (at least the bytes read).
func load(d *permission.Decider, call *permission.Call, op string) (text string, whole bool, size int64, err error) {
	root, rel, err := beneath(d, call, op)
	if err != nil {
		return "", false, 0, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return "", false, 0, fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, 0, fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	switch {
	case fi.IsDir() && op == "read":
		text, err := list(f, call.Path)
		return text, true, 0, err
	case fi.IsDir():
		return "", false, 0, fmt.Errorf("%s %s: is a directory", op, call.Path)
	case !fi.Mode().IsRegular():
		// A FIFO would block the loop; a device is nobody's source file.
		return "", false, 0, fmt.Errorf("%s %s: not a regular file (%s)", op, call.Path, fi.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return "", false, 0, fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	if len(b) > MaxReadBytes {
		return string(b[:MaxReadBytes]), false, max(fi.Size(), int64(len(b))), nil
	}
	return string(b), true, int64(len(b)), nil
}

// list returns the names in the open directory f, sorted. A sandboxed
// command can fill a directory without end, so a listing is read like a
// file: at most MaxReadBytes of names, a batch at a time, then it says
// it was cut (the names kept are the first the directory gave).
func list(f *os.File, name string) (string, error) {
	var names []string
	size, cut := 0, false
	for !cut {
		batch, err := f.Readdirnames(256)
		for _, n := range batch {
			if size+len(n)+1 > MaxReadBytes {
				cut = true
				break
			}
			names = append(names, n)
			size += len(n) + 1
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("list %s: %w", name, err)
		}
	}
	sort.Strings(names)
	out := strings.Join(names, "\n")
	if cut {
		out += fmt.Sprintf("\n[listing cut at %d bytes of names]", MaxReadBytes)
	}
	return out, nil
}

func writeFile(d *permission.Decider) Handler {
	return func(_ context.Context, call *permission.Call) (string, error) {
		content, ok, err := call.String("content")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("write %s: no content given", call.Path)
		}
		if err := write(d, call, "write", content); err != nil {
			return "", err
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(content), call.Path), nil
	}
}

// write creates the missing parents one at a time, each beneath the one
// before, and replaces the file through a temporary file in its opened
// parent (safefs.Root.WriteFile).
func write(d *permission.Decider, call *permission.Call, op, content string) error {
	root, rel, err := beneath(d, call, op)
	if err != nil {
		return err
	}
	defer root.Close()
	dir, base := path.Split(rel)
	parent, err := root.MkdirAll(strings.TrimSuffix(dir, "/"), 0o755)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	defer parent.Close()
	if err := parent.WriteFile(base, []byte(content), 0o644); err != nil {
		return fmt.Errorf("%s %s: %w", op, call.Path, err)
	}
	return nil
}

// editFile replaces old_string with new_string; old_string must occur
// exactly once unless replace_all is true, so an edit never lands somewhere
// the model did not mean. It edits only a file it can read whole, at most
// MaxReadBytes: a larger one is refused and left as it is, never written
// back cut.
func editFile(d *permission.Decider) Handler {
	return func(_ context.Context, call *permission.Call) (string, error) {
		oldS, ok, err := call.String("old_string")
		if err != nil || !ok || oldS == "" {
			return "", errors.Join(err, fmt.Errorf("edit %s: old_string is required", call.Path))
		}
		newS, _, err := call.String("new_string")
		if err != nil {
			return "", err
		}
		var all bool
		if raw, ok := call.Args["replace_all"]; ok {
			if err := json.Unmarshal(raw, &all); err != nil {
				return "", fmt.Errorf("edit %s: replace_all is not a boolean", call.Path)
			}
		}
		text, whole, size, err := load(d, call, "edit")
		if err != nil {
			return "", err
		}
		if !whole {
			return "", fmt.Errorf("edit %s: the file is %d bytes, more than the %d bytes edit_file reads whole, so it was not edited and is unchanged; "+
				"edit it with a bash command instead (sed -i, or a short script), or split it into smaller files", call.Path, size, MaxReadBytes)
		}
		n := strings.Count(text, oldS)
		switch {
		case n == 0:
			return "", fmt.Errorf("edit %s: old_string not found", call.Path)
		case n > 1 && !all:
			return "", fmt.Errorf("edit %s: old_string occurs %d times; make it unique or set replace_all", call.Path, n)
		}
		if err := write(d, call, "edit", strings.Replace(text, oldS, newS, map[bool]int{true: -1, false: 1}[all])); err != nil {
			return "", err
		}
		return fmt.Sprintf("replaced %d occurrence(s) in %s", map[bool]int{true: n, false: 1}[all], call.Path), nil
	}
}

// globHandler walks from the pattern's static prefix (already decided to be
// inside the workspace), opened beneath the workspace, supports "**", never
// enters a symlink (each directory is opened from the one above it without
// following), and keeps only matches that would themselves be allowed as
// reads: a link inside the workspace pointing out is not listed.
func globHandler(d *permission.Decider) Handler {
	return func(ctx context.Context, call *permission.Call) (string, error) {
		pattern := call.Pattern
		if !filepath.IsAbs(pattern) {
			base := call.Path
			if base == "" {
				base = d.Workspace()
			}
			pattern = filepath.Join(base, pattern)
		}
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(d.Workspace(), pattern)
		}
		segs := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
		static := 0
		for static < len(segs) && !strings.ContainsAny(segs[static], "*?[") {
			static++
		}
		rest := segs[static:]
		root, start, err := beneath(d, call, "glob")
		if err != nil {
			return "", err
		}
		defer root.Close()
		var matches []string
		visits := 0
		err = root.Walk(start, func(p string, _ fs.FileMode) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if visits++; visits > maxGlobVisits {
				return fmt.Errorf("it looked at more than %d entries; name a narrower directory or pattern", maxGlobVisits)
			}
			rel := "."
			if p != start {
				rel = strings.TrimPrefix(p, strings.TrimPrefix(start+"/", "./"))
			}
			abs := filepath.Join(d.Workspace(), p)
			if rel == "." {
				if len(rest) == 0 {
					matches = append(matches, abs)
				}
				return nil
			}
			if match(rest, strings.Split(rel, "/")) && allowed(d, abs) {
				matches = append(matches, abs)
				if len(matches) >= MaxGlobMatches {
					return fs.SkipAll
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("glob %s: %w", call.Pattern, err)
		}
		for i, m := range matches {
			if r, err := filepath.Rel(d.Workspace(), m); err == nil && !strings.HasPrefix(r, "..") {
				matches[i] = r
			}
		}
		return strings.Join(matches, "\n"), nil
	}
}

func allowed(d *permission.Decider, p string) bool {
	args, _ := json.Marshal(map[string]string{"path": p})
	return d.Decide(permission.Request{Name: permission.ToolReadFile, Arguments: args}).Action == permission.Allow
}

// match matches path segments against pattern segments; "**" spans any
// number of segments.
func match(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if match(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := filepath.Match(pat[0], segs[0]); !ok {
		return false
	}
	return match(pat[1:], segs[1:])
}
