package launcher

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTermModesReset(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"nothing", "plain text\r\n\x1b[1;31mred\x1b[0m", ""},
		{"full screen program", "\x1b[?1049h\x1b[?25l\x1b[?1000;1006h\x1b[?2004h\x1b[?1h\x1b=",
			"\x1b>\x1b[?1l\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[?25h\x1b[?1049l"},
		{"switched off again", "\x1b[?1049h\x1b[?2004h\x1b[?2004l\x1b[?1049l", ""},
		{"full reset", "\x1b[?1049h\x1bc", ""},
		{"autowrap off, focus on", "\x1b[?7l\x1b[?1004h", "\x1b[?1004l\x1b[?7h"},
		{"kitty keyboard and modifyOtherKeys", "\x1b[>1u\x1b[>3u\x1b[<u\x1b[>4;2m", "\x1b[<1u\x1b[>4m"},
		{"cancelled", "\x1b[?1049\x18h", ""},
		{"unknown mode", "\x1b[?12345h", ""},
		{"too long", "\x1b[?" + strings.Repeat("1;", 40) + "1049h", ""},
		{"soft reset is not a mode", "\x1b[!p", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m termModes
			m.feed([]byte(tc.out))
			require.Equal(t, tc.want, string(m.reset()))
			// Byte by byte: a sequence split across writes is still seen.
			var b termModes
			for i := range len(tc.out) {
				b.feed([]byte{tc.out[i]})
			}
			require.Equal(t, tc.want, string(b.reset()))
			require.Empty(t, b.reset(), "reset twice")
		})
	}
}
