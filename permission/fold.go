package permission

import (
	"os"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/cordon-sandbox/cordon/policy"
)

// caseInsensitive says whether paths that differ only in case may name the
// same file. macOS volumes are case-insensitive by default, so there
// ".SSH/id_ed25519" opens ~/.ssh/id_ed25519 and ".VSCODE/tasks.json"
// creates what VS Code reads as .vscode/tasks.json. Elsewhere a directory
// can still fold case (ext4 casefold, vfat), which sameFile detects for
// what exists.
var caseInsensitive = runtime.GOOS == "darwin"

// explain is the launched policy's verdict on the canonical path p, also
// under every root whose spelling differs from p's only in case and may be
// the same file, or, when fold is set, that a tool matching without case
// reaches through p (Gemini's glob): the narrowest of those verdicts.
func (d *Decider) explain(p string, fold bool) policy.Verdict {
	v := d.kernel.Explain(p)
	for _, r := range d.strict {
		n, ok := foldPrefix(r, p)
		if !ok || !fold && !d.sameFold(r, p[:n]) {
			continue
		}
		w := d.kernel.Explain(r + p[n:])
		if v.Read && !w.Read || v.Write && !w.Write {
			w.Read, w.Write = w.Read && v.Read, w.Write && v.Write
			w.Reason = "spelled " + p + ", which names the same file on a case-insensitive volume: " + w.Reason
			if fold {
				w.Reason = "matched without case, " + p + " reaches " + r + p[n:] + ": " + w.Reason
			}
			v = w
		}
	}
	return v
}

// foldPrefix reports whether root equals or contains p ignoring case but
// not exactly, and the length in bytes of p's part that spells root (it
// may differ from len(root): "ſ" folds to "s", "K" to "k").
func foldPrefix(root, p string) (int, bool) {
	n := 0
	for _, r := range root {
		if n >= len(p) {
			return 0, false
		}
		q, size := utf8.DecodeRuneInString(p[n:])
		if r != q && !strings.EqualFold(string(r), string(q)) {
			return 0, false
		}
		n += size
	}
	if p[:n] == root {
		return 0, false
	}
	return n, n == len(p) || p[n] == '/' || root == "/"
}

// sameFold reports whether a and b, equal but for case, may be one file.
func (d *Decider) sameFold(a, b string) bool {
	if caseInsensitive {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// withinFold is guards.Within that also counts a case variant that may be
// the same file, or any case variant when fold is set.
func (d *Decider) withinFold(root, p string, fold bool) bool {
	if root == p || strings.HasPrefix(p, root) && len(p) > len(root) && (p[len(root)] == '/' || root == "/") {
		return true
	}
	n, ok := foldPrefix(root, p)
	return ok && (fold || d.sameFold(root, p[:n]))
}
