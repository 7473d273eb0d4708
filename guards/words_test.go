package guards

import "testing"

// TestAnsiC pins the decoding of bash's $'...' escapes, including the edge
// cases bash leaves as written (a letter with no digits, a trailing \c).
func TestAnsiC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`plain`, "plain"},
		{`\a\b\e\E\f\n\r\t\v`, "\a\b\x1b\x1b\f\n\r\t\v"},
		{`\x73udo`, "sudo"},
		{`\x7`, "\x07"},
		{`\x737`, "s7"},
		{`\xg`, `\xg`},
		{`\u00e9`, "é"},
		{`\U0001F600`, "😀"},
		{`\u`, `\u`},
		{`\163udo`, "sudo"},
		{`\0`, "\x00"},
		{`\1234`, "S4"},
		{`\cA\c`, "\x01"},
		{`\\\'\"\?`, `\'"?`},
		{`\q`, `\q`},
		{`end\`, `end\`},
	} {
		if got := ansiC(tc.in); got != tc.want {
			t.Errorf("ansiC(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
