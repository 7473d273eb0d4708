package shown

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/My Project":                   "/home/u/My Project",
		"a\\b":                                 `a\\b`,
		"n1\x1b]0;T\a\x1b[?1049h":              `n1\x1b]0;T\a\x1b[?1049h`,
		"\xff\xfe":                             `\xff\xfe`,
		"é":                                    "é",
		"\u0085\u2028\x9b":                     `\u0085\u2028\x9b`,
		"\u200f\u200e\u061c\u200b\u2060\u00ad": `\u200f\u200e\u061c\u200b\u2060\u00ad`,
		"\u202e\u2066\u00a0\u3000\u3164":       `\u202e\u2066\u00a0\u3000\u3164`,
	} {
		require.Equal(t, want, String(in), "%q", in)
	}
}

func TestToken(t *testing.T) {
	require.Equal(t, `evil.example\x20\x20x`, Token("evil.example  x"))
	require.Equal(t, "abcdefghijklmnopqrst[... 26 bytes in all]", Cut("abcdefghijklmnopqrstuvwxyz", 20))
}
