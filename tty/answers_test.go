package tty

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guardOut is what the terminal receives of ws written in turn.
func guardOut(g *answerGuard, ws ...string) string {
	var b strings.Builder
	for _, w := range ws {
		b.Write(g.out([]byte(w)))
	}
	return b.String()
}

// TestAnswerGuardClipboard: an OSC 52 query never reaches the terminal,
// however it is split across writes, with BEL or ST, with leading zeros,
// inside tmux's passthrough (ESC doubled); a clipboard write, other OSCs
// and the text around them pass unchanged.
func TestAnswerGuardClipboard(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\x1b]52;c;?\x07b", "ab"},
		{"a\x1b]52;c;?\x1b\\b", "ab"},
		{"a\x1b]52;;?\x07b", "ab"},
		{"a\x1b]0052;cpqs01;?\x07b", "ab"},
		{"\x1bPtmux;\x1b\x1b]52;c;?\x07\x1b\\", "\x1bPtmux;\x1b\x1b\\"},
		{"a\x1b]52;" + strings.Repeat("c", 100) + ";?\x07b", "ab"},
		{"a\x1b]52;c;?\x1b[1mb", "a\x1b[1mb"}, // ESC ends the string and begins its own
		{"\x1b]52;c;aGVsbG8=\x07", "\x1b]52;c;aGVsbG8=\x07"},
		{"\x1b]0;title\x07\x1b]8;;http://x\x1b\\", "\x1b]0;title\x07\x1b]8;;http://x\x1b\\"},
		{"\x1b]52\x07x", "\x1b]52\x07x"},
		{"\x1b]52;c\x07x", "\x1b]52;c\x07x"},
		{"\x1b[1m\x1b\x1b[0mé", "\x1b[1m\x1b\x1b[0mé"},
	} {
		require.Equal(t, c.want, guardOut(&answerGuard{}, c.in), "%q", c.in)
		// Every split into two writes, and one byte a write.
		for i := 1; i < len(c.in); i++ {
			require.Equal(t, c.want, guardOut(&answerGuard{}, c.in[:i], c.in[i:]), "%q split at %d", c.in, i)
		}
		require.Equal(t, c.want, guardOut(&answerGuard{}, strings.Split(c.in, "")...), "%q byte by byte", c.in)
	}
}

// TestAnswerGuardCounts: DA1 queries out and DA1 answers in, as
// terminals take them; what is still to come before cordon's own.
func TestAnswerGuardCounts(t *testing.T) {
	var g answerGuard
	g.out([]byte("plain text"))
	require.False(t, g.asked)
	g.out([]byte("\x1b[c\x1b[0c\x1b[00c\x1b[>c\x1b[=c\x1b[1c\x1b[ c\x1b[0;1c"))
	require.True(t, g.asked)
	require.Equal(t, 4, g.da1Out) // CSI c, 0c, 00c, 0;1c
	g.relayed([]byte("\x1b[?1;2c"))
	g.relayed([]byte("\x1b[>84;0;0c\x1b[3;1R"))
	g.relayed([]byte("\x1b]11;\x1b[?1;2c\x07")) // inside a string: not an answer
	g.relayed([]byte("\x1b[?6"))
	g.relayed([]byte("2;22c"))
	require.Equal(t, 2, g.da1In)
	require.Equal(t, 2, g.pending())
	g.relayed([]byte("\x1b[?1c\x1b[?1c\x1b[?1c"))
	require.Equal(t, 0, g.pending())

	var e answerGuard
	e.out([]byte("\x05"))
	require.True(t, e.asked, "ENQ asks for the answerback")
}

// TestAnswerGuardAsks: sequences a terminal answers set asked; modes,
// colours, titles and the screen do not, so typing ahead survives them.
func TestAnswerGuardAsks(t *testing.T) {
	for _, q := range []string{"\x1b[c", "\x1b[>c", "\x1b[6n", "\x1b[5n", "\x1b[14t", "\x1b[?2026$p", "\x1b[>q", "\x1b[?u", "\x1bZ", "\x1bP$qm\x1b\\", "\x1b]11;?\x07", "\x05"} {
		var g answerGuard
		g.out([]byte(q))
		require.True(t, g.asked, "%q", q)
	}
	for _, s := range []string{"\x1b[?1049h\x1b[?25l\x1b[?1000h\x1b[?2004h\x1b[0m\x1b[2J\x1b[H", "\x1b]0;title\x07", "\x1b#8", "\x1b(B"} {
		var g answerGuard
		g.out([]byte(s))
		require.False(t, g.asked, "%q", s)
	}
}
