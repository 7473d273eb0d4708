package tty

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTermModesReset(t *testing.T) {
	// What follows any escape sequence: a soft reset, its parts for
	// terminals without one, and autowrap on.
	const soft = "\x1b[!p\x1b[4l\x1b[0m\x0f\x1b(B"
	const wrap = "\x1b[?7h"
	zeros := func(n int) string { return strings.Repeat("0", n) }
	for _, tc := range []struct {
		name, out, want string
	}{
		{"nothing", "plain text\r\n", ""},
		{"colours", "\x1b[1;31mred\x1b[0m", soft + wrap},
		{"full screen program", "\x1b[?1049h\x1b[?25l\x1b[?1000;1006h\x1b[?2004h\x1b[?1h\x1b=",
			soft + "\x1b>\x1b[?1l\x1b[?1000l\x1b[?1006l\x1b[?2004l" + wrap + "\x1b[?25h\x1b[?1049l"},
		{"switched off again", "\x1b[?1049h\x1b[?2004h\x1b[?2004l\x1b[?1049l", soft + wrap},
		// tmux's full reset leaves the alternate screen on.
		{"full reset", "\x1b[?1049h\x1bc", soft + wrap + "\x1b[?1049l"},
		{"autowrap off, focus on", "\x1b[?7l\x1b[?1004h", soft + "\x1b[?1004l" + wrap},
		{"kitty keyboard and modifyOtherKeys", "\x1b[>1u\x1b[>3u\x1b[<u\x1b[>4;2m", soft + "\x1b[<1u\x1b[>4m" + wrap},
		{"kitty flags set in place", "\x1b[=5u", soft + "\x1b[=0;1u" + wrap},
		{"kitty flags bits set", "\x1b[=0005;02u", soft + "\x1b[=0;1u" + wrap},
		{"kitty flags bits cleared", "\x1b[=5;3u", soft + wrap},
		{"cancelled", "\x1b[?1049\x18h", soft + wrap},
		{"unknown mode", "\x1b[?12345h", soft + wrap},
		{"many parameters", "\x1b[?" + strings.Repeat("0;", 40) + "1049h", soft + wrap + "\x1b[?1049l"},
		{"leading zeros", "\x1b[?" + zeros(34) + "1049h\x1b[?" + zeros(4000) + "25l\x1b[>" + zeros(50) + "4;" + zeros(50) + "2m",
			soft + "\x1b[>4m" + wrap + "\x1b[?25h\x1b[?1049l"},
		{"saturated, not wrapped", "\x1b[?4294968345h\x1b[?" + strings.Repeat("9", 100) + "h", soft + wrap},
		{"insert, charset, conceal", "\x1b[4h\x1b(0\x1b[8m", soft + wrap},
		{"scroll region", "\x1b[2;5r", soft + wrap + "\x1b[?6l\x1b[r\x1b[9999B"},
		{"origin mode", "\x1b[?0006h", soft + wrap + "\x1b[?6l\x1b[r\x1b[9999B"},
		{"scroll region reset", "\x1b[r\x1b[0r\x1b[?6l", soft + wrap},
		{"scroll region in the alternate screen", "\x1b[?1049h\x1b[2;5r", soft + wrap + "\x1b[?6l\x1b[r\x1b[?1049l"},
		{"left and right margins", "\x1b[?69h\x1b[5;10s", soft + "\x1b[?69l" + wrap},
		{"shift out", "text\x0emore", soft + wrap},
		{"soft reset is not a mode", "\x1b[!p", soft + wrap},
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
