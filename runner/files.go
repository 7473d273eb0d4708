package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/permission"
)

// Limits keep one tool result small enough for a model's context.
const (
	MaxReadBytes   = 256 << 10
	MaxGlobMatches = 1000
)

// FileHandlers returns the read_file, write_file, edit_file and glob
// handlers. They act on call.Resolved, the symlink-free path the decision
// was made on, and refuse to follow a link swapped in since (O_NOFOLLOW).
func FileHandlers(d *permission.Decider) map[string]Handler {
	return map[string]Handler{
		permission.ToolReadFile:  readFile,
		permission.ToolWriteFile: writeFile,
		permission.ToolEditFile:  editFile,
		permission.ToolGlob:      globHandler(d),
	}
}

func readFile(_ context.Context, call *permission.Call) (string, error) {
	f, err := os.OpenFile(call.Resolved, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", call.Path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		names, err := f.Readdirnames(-1)
		if err != nil {
			return "", fmt.Errorf("list %s: %w", call.Path, err)
		}
		sort.Strings(names)
		return strings.Join(names, "\n"), nil
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", call.Path, err)
	}
	if len(b) > MaxReadBytes {
		return string(b[:MaxReadBytes]) + fmt.Sprintf("\n[cut at %d bytes]", MaxReadBytes), nil
	}
	return string(b), nil
}

func writeFile(_ context.Context, call *permission.Call) (string, error) {
	content, ok, err := call.String("content")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("write %s: no content given", call.Path)
	}
	if err := os.MkdirAll(filepath.Dir(call.Resolved), 0o755); err != nil {
		return "", fmt.Errorf("write %s: %w", call.Path, err)
	}
	if err := writeNoFollow(call.Resolved, content); err != nil {
		return "", fmt.Errorf("write %s: %w", call.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(content), call.Path), nil
}

func writeNoFollow(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// editFile replaces old_string with new_string; old_string must occur
// exactly once unless replace_all is true, so an edit never lands somewhere
// the model did not mean.
func editFile(ctx context.Context, call *permission.Call) (string, error) {
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
	text, err := readFile(ctx, call)
	if err != nil {
		return "", err
	}
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return "", fmt.Errorf("edit %s: old_string not found", call.Path)
	case n > 1 && !all:
		return "", fmt.Errorf("edit %s: old_string occurs %d times; make it unique or set replace_all", call.Path, n)
	}
	if err := writeNoFollow(call.Resolved, strings.Replace(text, oldS, newS, map[bool]int{true: -1, false: 1}[all])); err != nil {
		return "", fmt.Errorf("edit %s: %w", call.Path, err)
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", map[bool]int{true: n, false: 1}[all], call.Path), nil
}

// globHandler walks from the pattern's static prefix (already decided to be
// inside the workspace), supports "**", does not descend through symlinks,
// and keeps only matches that would themselves be allowed as reads: a link
// inside the workspace pointing out is not listed.
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
		root := call.Resolved
		var matches []string
		err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable parts are skipped, not fatal
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel, _ := filepath.Rel(root, p)
			if rel == "." {
				if len(rest) == 0 {
					matches = append(matches, p)
				}
				return nil
			}
			if match(rest, strings.Split(rel, "/")) && allowed(d, p) {
				matches = append(matches, p)
				if len(matches) >= MaxGlobMatches {
					return fs.SkipAll
				}
			}
			return nil
		})
		if err != nil {
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
