package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// rawControl reports the first thing in s a terminal would act on or
// hide: a C0 control but newline, DEL, a C1 control as a raw byte or as
// UTF-8, a bidi or invisible format mark.
func rawControl(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20 && r != '\n', r >= 0x7f && r < 0xa0,
			r == 0x202e, r == 0x200f, r == 0x2066, r == 0x200b:
			return fmt.Sprintf("%q at %d", r, i)
		}
	}
	return ""
}

// The escape sequences a hostile name carries: a title, the alternate
// screen, a clipboard write (OSC 52), a C1 CSI.
const (
	escTitle = "n1\x1b]0;TITLE\a\x1b[?1049h"
	escClip  = "n2\x1b]52;c;ZWNobyBwd25lZAo=\a\u009b?1049h"
)

// TestNotesEscaped: directories a sandbox made in the workspace, with
// escape sequences in their names, holding a .git link or a .git file,
// are named by notes at every later launch; those lines reach the
// user's terminal escaped, where they once wrote its clipboard.
func TestNotesEscaped(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, escTitle), 0o755))
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(ws, escTitle, ".git")))
	require.NoError(t, os.Mkdir(filepath.Join(ws, escClip), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, escClip, ".git"), []byte("gitdir: /tmp/x\x1b]0;T2\a\n"), 0o644))

	for _, args := range [][]string{
		{"run", "--backend", "none", "--workspace", ws, "--", "true"},
		{"profile", "--workspace", ws},
	} {
		code, stdout, stderr := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, stderr, `n1\x1b]0;TITLE\a\x1b[?1049h/.git is a symlink`, "the note is there, escaped")
		require.Contains(t, stderr, `\x1b]52;c;`)
		require.Contains(t, stderr, `names /tmp/x\x1b]0;T2\a`)
		require.Empty(t, rawControl(stderr), "%v: stderr %q", args, stderr)
		require.Empty(t, rawControl(stdout), "%v: stdout %q", args, stdout)
	}
}

// TestDoctorEscapesRepository: a cloned repository's settings name the
// hook's binary; doctor shows it escaped.
func TestDoctorEscapesRepository(t *testing.T) {
	_, project, _ := setupMachine(t)
	path := filepath.Join(project, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"'/x\u001b]52;c;ZWNobyBwd25lZAo=\u0007\u001b[?1049h\u202e/cordon' hook claude-code"}]}]}}`), 0o644))
	_, out, stderr := runCLI(t, "", "doctor", "--dir", project)
	// Shown escaped (doctor quotes the command too, so the escapes may
	// be escaped once more), never raw.
	require.Regexp(t, `/x\\+x1b\]52;c;ZWNobyBwd25lZAo=\\+a\\+x1b\[\?1049h\\+u202e/cordon`, out, "the hook's path is shown, escaped")
	require.Empty(t, rawControl(out), "stdout %q", out)
	require.Empty(t, rawControl(stderr), "stderr %q", stderr)
}
