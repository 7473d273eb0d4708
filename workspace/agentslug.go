package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Claude Code keeps each project's transcripts in ~/.claude/projects/<key>
// and its auto-memory, which every later session in that project obeys,
// in ~/.claude/projects/<key>/memory, where <key> is a path made a name
// (claudeProjectKey). Claude Code 2.1.332 keys the transcripts by its
// working directory and the memory by the repository's root (the main
// work tree of a linked one), or the working directory outside a
// repository (docs/agents.md, "Claude Code"). So the sandbox writes those two entries and no other
// project's: a memory planted for another project would be obeyed there.

// claudeKeyMax is where Claude Code cuts a long key and adds a hash.
const claudeKeyMax = 200

// claudeProjectKey is the name Claude Code gives path under
// ~/.claude/projects: every UTF-16 unit that is not an ASCII letter or
// digit becomes "-"; a key longer than 200 units is cut there and gets
// "-" and the path's 32-bit Java-style string hash, absolute, in base 36.
func claudeProjectKey(path string) string {
	units := utf16.Encode([]rune(path))
	var b strings.Builder
	for _, u := range units {
		if u < 0x80 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b.WriteByte(byte(u))
		} else {
			b.WriteByte('-')
		}
	}
	key := b.String()
	if len(key) <= claudeKeyMax {
		return key
	}
	var h int32
	for _, u := range units {
		h = h<<5 - h + int32(u)
	}
	return key[:claudeKeyMax] + "-" + strconv.FormatInt(abs64(int64(h)), 36)
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// claudeMemoryRoot is the directory whose key names the memory of a
// session started in dir: the root of the repository holding dir, or dir
// itself outside one; "" for a linked work tree (a .git file), whose
// memory Claude Code keys by the main work tree. That one is not followed:
// the .git file is the sandbox's to write, and would name any project.
func claudeMemoryRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if fi.IsDir() {
				return d
			}
			return ""
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// claudeProjectDirs are the entries of ~/.claude/projects a Claude Code
// session started in the workspace ws writes: its transcripts' and its
// project's memory.
func claudeProjectDirs(_, ws string) ([]string, []string) {
	dirs := []string{".claude/projects/" + claudeProjectKey(ws)}
	if root := claudeMemoryRoot(ws); root != "" && root != ws {
		dirs = append(dirs, ".claude/projects/"+claudeProjectKey(root)+"/memory")
	}
	return dirs, nil
}
